// The machine-readable lines a toroid-node prints (see firmware/node_main.cc)
// and their parser: "KIND node=X,Y,Z key=value key=\"quoted value\" WORD".
#pragma once
#include <map>
#include <string>
#include <vector>

namespace toroid::rig {

struct NodeEvent {
  std::string kind;                         // up, ports, state, case, total, verdict, linkdown, quiesced, bench
  std::map<std::string, std::string> kv;    // node=..., reason=... (unquoted)
  std::vector<std::string> words;           // bare words (PASS / FAIL)
  std::string get(const std::string& k) const {
    auto it = kv.find(k);
    return it == kv.end() ? std::string() : it->second;
  }
};

// True if `line` is an event line (a known kind followed by node=...).
bool parse_node_event(const std::string& line, NodeEvent* ev);

}  // namespace toroid::rig
