#include "drivers/capture/capture_port.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace toroid {

namespace {
// Larger than any frame a port carries (9000-byte jumbo frames included).
constexpr int kSnapLen = 65535;
}  // namespace

Result<std::unique_ptr<PcapFile>> PcapFile::create(const std::string& path) {
  std::unique_ptr<PcapFile> f(new PcapFile());
  f->path_ = path;
  f->dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (!f->dead_) return error(Code::kInternal, "pcap %s: pcap_open_dead failed", path.c_str());
  errno = 0;
  f->dumper_ = pcap_dump_open(f->dead_, path.c_str());
  if (!f->dumper_) {
    const std::string why = errno == EMFILE || errno == ENFILE
                                ? std::string(std::strerror(errno)) + " (one file per port: raise ulimit -n)"
                                : std::string(pcap_geterr(f->dead_));
    return error(Code::kIo, "pcap: cannot create %s: %s", path.c_str(), why.c_str());
  }
  return f;
}

PcapFile::~PcapFile() {
  if (dumper_) pcap_dump_close(dumper_);
  if (dead_) pcap_close(dead_);
}

void PcapFile::write(uint64_t ts_ns, const uint8_t* data, uint32_t len) {
  pcap_pkthdr h;
  h.ts.tv_sec = static_cast<time_t>(ts_ns / kSec);
  h.ts.tv_usec = static_cast<suseconds_t>(ts_ns % kSec);  // nanoseconds: the file's precision is nano
  h.caplen = len < static_cast<uint32_t>(kSnapLen) ? len : static_cast<uint32_t>(kSnapLen);
  h.len = len;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, data);
  ++frames_;
}

void PcapFile::flush() { pcap_dump_flush(dumper_); }

CapturePort::CapturePort(Port& inner, PcapFile& file, const Clock& clock, int64_t offset_ns)
    : inner_(inner), file_(file), clock_(clock), offset_ns_(offset_ns) {
  stats_ = inner_.stats();
}

uint64_t CapturePort::stamp() const { return static_cast<uint64_t>(static_cast<int64_t>(clock_.now_ns()) + offset_ns_); }

uint16_t CapturePort::rx_burst(Packet** pkts, uint16_t n) {
  const uint16_t k = inner_.rx_burst(pkts, n);
  if (k) {
    const uint64_t ts = stamp();
    for (uint16_t i = 0; i < k; ++i) file_.write(ts, pkts[i]->data(), pkts[i]->len);
  }
  stats_ = inner_.stats();
  return k;
}

uint16_t CapturePort::tx_burst(Packet** pkts, uint16_t n) {
  size_t total = 0;
  for (uint16_t i = 0; i < n; ++i) total += pkts[i]->len;
  if (tx_copy_.size() < total) tx_copy_.resize(total);  // grows to the largest burst, then stays
  if (tx_len_.size() < n) tx_len_.resize(n);
  size_t off = 0;
  for (uint16_t i = 0; i < n; ++i) {
    std::memcpy(tx_copy_.data() + off, pkts[i]->data(), pkts[i]->len);
    tx_len_[i] = pkts[i]->len;
    off += pkts[i]->len;
  }
  const uint64_t ts = stamp();
  const uint16_t k = inner_.tx_burst(pkts, n);
  off = 0;
  for (uint16_t i = 0; i < k; ++i) {
    file_.write(ts, tx_copy_.data() + off, tx_len_[i]);
    off += tx_len_[i];
  }
  stats_ = inner_.stats();
  return k;
}

int64_t monotonic_to_realtime_ns() {
  timespec m, r;
  clock_gettime(CLOCK_MONOTONIC, &m);
  clock_gettime(CLOCK_REALTIME, &r);
  const auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
  return ns(r) - ns(m);
}

}  // namespace toroid
