#include "firmware/capture.h"

#include <cstdio>

#include "base/files.h"

namespace toroid {

std::string capture_file_name(const Coord& node, const PortSpec& port) {
  char b[96];
  snprintf(b, sizeof b, "node-%u-%u-%u-%s-%s.pcap", node.c[0], node.c[1], node.c[2], port.name.c_str(),
           dir_name(port.dir));
  return b;
}

Result<std::unique_ptr<NodeCapture>> NodeCapture::open(const std::string& dir, const Personality& p,
                                                       const std::vector<Port*>& ports, const Clock& clock,
                                                       int64_t offset_ns) {
  if (Status st = mkdir_p(dir); !st) return error(st.code(), "pcap: %s", st.message().c_str());
  if (ports.size() != p.ports.size())
    return error(Code::kInternal, "pcap: %zu ports but the personality names %zu", ports.size(), p.ports.size());
  std::unique_ptr<NodeCapture> c(new NodeCapture());
  for (size_t i = 0; i < ports.size(); ++i) {
    auto f = PcapFile::create(dir + "/" + capture_file_name(p.coord, p.ports[i]));
    if (!f) return f.status();
    c->files_.push_back(std::move(f.value()));
    c->ports_.push_back(std::make_unique<CapturePort>(*ports[i], *c->files_.back(), clock, offset_ns));
    c->raw_.push_back(c->ports_.back().get());
  }
  return c;
}

uint64_t NodeCapture::frames() const {
  uint64_t n = 0;
  for (const auto& f : files_) n += f->frames();
  return n;
}

}  // namespace toroid
