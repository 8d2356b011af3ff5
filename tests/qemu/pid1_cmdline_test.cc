// The guest's personality on the kernel command line (firmware/pid1.h): the
// toroid.* keys, their checks, and the toroid-node flags they become. The
// boot steps themselves (mounts, modules, NIC binding) run only in a VM: the
// qemu-* tests of this suite boot them.

#include <string>
#include <vector>

#include "firmware/personality.h"
#include "firmware/pid1.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

const char kLine[] =
    "console=ttyS0 loglevel=3 panic=-1 hugepages=64 toroid.dims=2x2x1 toroid.coord=1,0,0 "
    "toroid.job=selftest toroid.seed=7 toroid.net=uio toroid.ports=x+@00:04.0,x-@00:05.0,y+@00:06.0,y-@0000:00:07.0 "
    "toroid.train_timeout=60s toroid.linger=3s toroid.arg=pattern=uniform toroid.eal_log=info";

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string parse_error(const std::string& line) {
  auto r = parse_guest_cmdline(line);
  return r ? std::string("(parsed)") : r.status().message();
}

}  // namespace

TEST_GROUP(GuestCmdline){};

TEST(GuestCmdline, ParsesEveryKey) {
  auto r = parse_guest_cmdline(kLine);
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  const GuestConfig& c = r.value();
  STRCMP_EQUAL("2x2x1", c.dims.c_str());
  STRCMP_EQUAL("1,0,0", c.coord.c_str());
  STRCMP_EQUAL("selftest", c.job.c_str());
  STRCMP_EQUAL("7", c.seed.c_str());
  STRCMP_EQUAL("uio", c.net.c_str());
  LONGS_EQUAL(4, c.ports.size());
  STRCMP_EQUAL("x+", c.ports[0].dir.c_str());
  STRCMP_EQUAL("0000:00:04.0", c.ports[0].pci.c_str());
  STRCMP_EQUAL("0000:00:07.0", c.ports[3].pci.c_str());
  LONGS_EQUAL(-1, c.hugetlbfs);
}

TEST(GuestCmdline, UioModeGivesPciPortsAndPassesFlagsThrough) {
  auto r = parse_guest_cmdline(kLine);
  CHECK_TRUE(r.is_ok());
  const GuestConfig& c = r.value();
  std::vector<std::string> addrs;
  for (const auto& p : c.ports) addrs.push_back(p.pci);
  STRCMP_EQUAL(
      "--dims 2x2x1 --coord 1,0,0 --job selftest --seed 7 --port port0:x+:pci:0000:00:04.0 "
      "--port port1:x-:pci:0000:00:05.0 --port port2:y+:pci:0000:00:06.0 --port port3:y-:pci:0000:00:07.0 "
      "--train-timeout 60s --linger 3s --arg pattern=uniform --eal-log-level info",
      joined(guest_node_args(c, addrs)).c_str());
  STRCMP_EQUAL("uio uio_pci_generic", joined(guest_modules(c)).c_str());
}

TEST(GuestCmdline, TheFlagsMakeAValidPersonality) {
  auto r = parse_guest_cmdline(kLine);
  CHECK_TRUE(r.is_ok());
  std::vector<std::string> addrs;
  for (const auto& p : r.value().ports) addrs.push_back(p.pci);
  std::vector<std::string> personality;
  const auto args = guest_node_args(r.value(), addrs);
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--dims" || args[i] == "--coord" || args[i] == "--job" || args[i] == "--seed" ||
        args[i] == "--port" || args[i] == "--arg") {
      personality.push_back(args[i]);
      personality.push_back(args[i + 1]);
    }
  }
  auto p = parse_personality_args(personality);
  CHECK_TRUE_TEXT(p.is_ok(), p.status().message().c_str());
  Status st = validate(p.value());
  CHECK_TRUE_TEXT(st.is_ok(), st.message().c_str());
  STRCMP_EQUAL("pci", p.value().ports[2].driver.c_str());
  STRCMP_EQUAL("0000:00:06.0", p.value().ports[2].address.c_str());
}

TEST(GuestCmdline, KernelModeUsesInterfacesAndTheUringPortByDefault) {
  const std::string line =
      "toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=train toroid.net=kernel toroid.ports=x+@00:04.0,x-@00:05.0";
  auto r = parse_guest_cmdline(line);
  CHECK_TRUE(r.is_ok());
  STRCMP_EQUAL("virtio_pci virtio_net", joined(guest_modules(r.value())).c_str());
  STRCMP_EQUAL("--dims 2x1x1 --coord 0,0,0 --job train --port port0:x+:uring:iface=eth1 --port port1:x-:uring:iface=eth0",
               joined(guest_node_args(r.value(), {"eth1", "eth0"})).c_str());
  auto a = parse_guest_cmdline(line + " toroid.kdrv=af_packet toroid.modules=virtio_blk");
  CHECK_TRUE(a.is_ok());
  STRCMP_EQUAL("--dims 2x1x1 --coord 0,0,0 --job train --port port0:x+:af_packet:iface=eth0 "
               "--port port1:x-:af_packet:iface=eth1",
               joined(guest_node_args(a.value(), {"eth0", "eth1"})).c_str());
  STRCMP_EQUAL("virtio_pci virtio_net virtio_blk", joined(guest_modules(a.value())).c_str());
}

TEST(GuestCmdline, QuotedValuesAndOtherKeysAreFine) {
  auto r = parse_guest_cmdline(
      "BOOT_IMAGE=x ro quiet \"toroid.dims=2x1x1\" toroid.coord=1,0,0 toroid.job=selftest "
      "toroid.ports=x+@00:04.0,x-@00:05.0 toroid.hugetlbfs=0\n");
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  LONGS_EQUAL(0, r.value().hugetlbfs);
}

TEST(GuestCmdline, ErrorsNameTheKey) {
  const std::string base = "toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=selftest ";
  const std::string ports = "toroid.ports=x+@00:04.0,x-@00:05.0";
  STRCMP_CONTAINS("toroid.ports is missing", parse_error(base).c_str());
  STRCMP_CONTAINS("toroid.dims is missing", parse_error("toroid.coord=0,0,0 toroid.job=x " + ports).c_str());
  STRCMP_CONTAINS("toroid.net=dpdk: expected uio or kernel", parse_error(base + ports + " toroid.net=dpdk").c_str());
  STRCMP_CONTAINS("unknown key toroid.colour", parse_error(base + ports + " toroid.colour=red").c_str());
  STRCMP_CONTAINS("toroid.job given twice", parse_error(base + ports + " toroid.job=train").c_str());
  STRCMP_CONTAINS("toroid.seed=x1: expected a number", parse_error(base + ports + " toroid.seed=x1").c_str());
  STRCMP_CONTAINS("expected a duration", parse_error(base + ports + " toroid.train_timeout=soon").c_str());
  STRCMP_CONTAINS("toroid.ports", parse_error(base + "toroid.ports=x+@00:04.0,x+@00:05.0").c_str());
  STRCMP_CONTAINS("PCI addresses", parse_error(base + "toroid.ports=x+@04.0").c_str());
  STRCMP_CONTAINS("directions", parse_error(base + "toroid.ports=w+@00:04.0").c_str());
  STRCMP_CONTAINS("needs a value", parse_error(base + ports + " toroid.linger").c_str());
  STRCMP_CONTAINS("KEY=VALUE", parse_error(base + ports + " toroid.arg=novalue").c_str());
}

// Found by fuzzing (tests/fuzz/guest_cmdline_fuzz.cc): a NUL inside a value
// went on to toroid-node's argv, where it cuts the value short unseen.
TEST(GuestCmdline, ControlCharactersAreRefusedNamingTheKey) {
  const std::string ports = " toroid.ports=x+@00:04.0,x-@00:05.0";
  std::string line = std::string("toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=self") + '\0' + "test" + ports;
  STRCMP_CONTAINS("toroid.job: control character 0x00 in the value", parse_error(line).c_str());
  line = "toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=selftest" + ports + " toroid.arg=a=\x01";
  STRCMP_CONTAINS("toroid.arg: control character 0x01 in the value", parse_error(line).c_str());
  line = "toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=selftest" + ports + " toroid.lo\x7fg=debug";
  STRCMP_CONTAINS("toroid.lo?g: control character 0x7f in the value", parse_error(line).c_str());
  // Tabs and newlines separate tokens, as in the kernel's own parser.
  line = "toroid.dims=2x1x1\ttoroid.coord=0,0,0\ntoroid.job=selftest" + ports;
  STRCMP_EQUAL("(parsed)", parse_error(line).c_str());
}
