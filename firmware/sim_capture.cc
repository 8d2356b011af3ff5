#include "firmware/sim_capture.h"

#include <cerrno>
#include <cstring>

#include "base/files.h"

namespace toroid {

Result<std::unique_ptr<SimCapture>> SimCapture::create(const std::string& dir, SimFabric& fabric) {
  if (Status st = mkdir_p(dir); !st) return error(st.code(), "pcap: %s", st.message().c_str());
  std::unique_ptr<SimCapture> c(new SimCapture());
  c->dir_ = dir;
  c->fabric_ = &fabric;
  const std::string path = dir + "/corrupted.txt";
  c->corrupted_ = fopen(path.c_str(), "w");
  if (!c->corrupted_) return error(Code::kIo, "pcap: cannot create %s: %s", path.c_str(), std::strerror(errno));
  fabric.set_corrupt_observer(c.get());
  return c;
}

SimCapture::~SimCapture() {
  if (fabric_) fabric_->set_corrupt_observer(nullptr);
  if (corrupted_) fclose(corrupted_);
}

Result<std::vector<Port*>> SimCapture::add_node(const Personality& p, const std::vector<SimPort*>& ports) {
  std::vector<Port*> raw(ports.begin(), ports.end());
  auto nc = NodeCapture::open(dir_, p, raw, fabric_->clock(), 0);
  if (!nc) return nc.status();
  for (size_t i = 0; i < ports.size(); ++i) {
    if (file_of_port_.size() <= ports[i]->id()) file_of_port_.resize(ports[i]->id() + 1);
    file_of_port_[ports[i]->id()] = capture_file_name(p.coord, p.ports[i]);
  }
  nodes_.push_back(std::move(nc.value()));
  return nodes_.back()->ports();
}

void SimCapture::on_corrupt_delivered(const SimPort& to, uint64_t rx_index, uint32_t bit) {
  const std::string& file = to.id() < file_of_port_.size() ? file_of_port_[to.id()] : to.info().name;
  fprintf(corrupted_, "%s rx=%lu bit=%u t_ns=%lu\n", file.c_str(), static_cast<unsigned long>(rx_index), bit,
          static_cast<unsigned long>(fabric_->now()));
  ++corrupted_count_;
}

std::string SimCapture::summary() const {
  uint64_t frames = 0;
  size_t files = 0;
  for (const auto& n : nodes_) {
    frames += n->frames();
    files += n->files();
  }
  char b[512];
  snprintf(b, sizeof b, "pcap: %zu files, %lu frames in %s; %lu corrupted frames delivered (%s/corrupted.txt)", files,
           static_cast<unsigned long>(frames), dir_.c_str(), static_cast<unsigned long>(corrupted_count_),
           dir_.c_str());
  return b;
}

}  // namespace toroid
