// Small text helpers for the line-oriented files the firmware reads
// (personalities, topologies): reading one, trimming, splitting into words,
// unsigned decimal numbers.
#pragma once
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace toroid {

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

inline std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// "a,b,,c" -> {"a", "b", "", "c"}: every field, empty ones too.
inline std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t e = s.find(sep, pos);
    if (e == std::string::npos) e = s.size();
    out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

// Decimal digits only, at most 19 of them (no sign, no overflow).
inline bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

// The next "key = value" line of in: '#' starts a comment, blank lines are
// skipped, *lineno counts lines. 1: *key and *value are set; 0: end of
// input; -1: a line without '=' (it is in *line).
inline int next_key_value(std::istream& in, int* lineno, std::string* key, std::string* value, std::string* line) {
  while (std::getline(in, *line)) {
    ++*lineno;
    const auto hash = line->find('#');
    if (hash != std::string::npos) line->resize(hash);
    *line = trim(*line);
    if (line->empty()) continue;
    const auto eq = line->find('=');
    if (eq == std::string::npos) return -1;
    *key = trim(line->substr(0, eq));
    *value = trim(line->substr(eq + 1));
    return 1;
  }
  return 0;
}

// The whole of a file; false if it cannot be opened.
inline bool read_text_file(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace toroid
