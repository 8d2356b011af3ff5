// Helpers of the bench tests (bench_test.cc, bench_rig_test.cc).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

namespace toroid::benchtest {

inline bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a command line under `timeout`, stdout and stderr together.
inline int run_shell(const std::string& cmd, std::string* out, int bound_s = 240) {
  FILE* p = popen(("timeout " + std::to_string(bound_s) + " " + cmd + " 2>&1").c_str(), "r");
  CHECK(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// The records of a JSON array as written by bench_json: one per line.
inline std::vector<std::string> json_records(const std::string& json) {
  std::vector<std::string> out;
  std::istringstream in(json);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(" {", 0) == 0) out.push_back(l);
  return out;
}

inline std::string field(const std::string& rec, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const size_t p = rec.find(k);
  if (p == std::string::npos) return "";
  const size_t s = p + k.size();
  if (rec[s] == '"') return rec.substr(s + 1, rec.find('"', s + 1) - s - 1);
  return rec.substr(s, rec.find_first_of(",}", s) - s);
}

}  // namespace toroid::benchtest
