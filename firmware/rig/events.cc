#include "firmware/rig/events.h"

namespace toroid::rig {

namespace {

bool known_kind(const std::string& k) {
  static const char* const kKinds[] = {"up",       "ports",    "state", "case",     "total",    "verdict",
                                       "linkdown", "reset",    "quiesced", "bench", "progress", "links"};
  for (const char* x : kKinds)
    if (k == x) return true;
  return false;
}

}  // namespace

bool parse_node_event(const std::string& line, NodeEvent* ev) {
  const size_t sp = line.find(' ');
  if (sp == std::string::npos) return false;
  const std::string kind = line.substr(0, sp);
  if (!known_kind(kind) || line.compare(sp + 1, 5, "node=") != 0) return false;
  NodeEvent e;
  e.kind = kind;
  size_t i = sp + 1;
  const size_t n = line.size();
  while (i < n) {
    while (i < n && line[i] == ' ') ++i;
    if (i >= n) break;
    size_t j = i;
    while (j < n && line[j] != ' ' && line[j] != '=') ++j;
    if (j < n && line[j] == '=') {
      const std::string key = line.substr(i, j - i);
      std::string val;
      i = j + 1;
      if (i < n && line[i] == '"') {
        ++i;
        while (i < n && line[i] != '"') {
          if (line[i] == '\\' && i + 1 < n) {
            ++i;
            val += line[i] == 'n' ? '\n' : line[i];
          } else {
            val += line[i];
          }
          ++i;
        }
        if (i >= n) return false;  // unterminated quote: not ours
        ++i;
      } else {
        while (i < n && line[i] != ' ') val += line[i++];
      }
      e.kv[key] = val;
    } else {
      e.words.push_back(line.substr(i, j - i));
      i = j;
    }
  }
  *ev = std::move(e);
  return true;
}

}  // namespace toroid::rig
