// The topology file: parsing, the whole-file checks (each problem named),
// the cabling plan, the generator, a rank's personality, and the port
// attributes it carries into a personality.
#include <algorithm>
#include <string>
#include <vector>

#include "firmware/personality.h"
#include "firmware/topology.h"
#include "firmware/topology_check.h"
#include "firmware/topology_gen.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

Topology gen(const char* dims, const char* driver, std::vector<std::string> hosts = {"h0"}) {
  TopoGenOptions o;
  auto d = parse_dims(dims);
  CHECK(d.is_ok());
  o.dims = *d;
  o.driver = driver;
  o.hosts = std::move(hosts);
  o.socket_dir = "/tmp/toroid-topo-test";
  o.partition = "lab-a";
  o.job = "selftest";
  auto t = generate_topology(o);
  CHECK_TEXT(t.is_ok(), t.status().message().c_str());
  return t.value();
}

// The text of a generated topology, re-parsed after `edit` (from -> to).
std::vector<std::string> problems_after(const Topology& t, const std::string& from, const std::string& to) {
  std::string text = topology_text(t, "test");
  const auto at = text.find(from);
  CHECK_TEXT(at != std::string::npos, ("not in the topology: " + from).c_str());
  text.replace(at, from.size(), to);
  auto p = parse_topology_text(text, "t.topo");
  CHECK_TEXT(p.is_ok(), p.status().message().c_str());
  return check_topology(p.value());
}

bool any_has(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& l : v) s += l + "\n";
  return s;
}

}  // namespace

TEST_GROUP(Topology){};

TEST(Topology, GeneratedTopologiesAreGoodAndRoundTrip) {
  for (const char* driver : {"af_xdp", "af_packet", "memif", "uring"}) {
    for (const char* dims : {"2x1x1", "2x2x2", "3x2x1", "4x4x1"}) {
      Topology t = gen(dims, driver);
      const auto problems = check_topology(t);
      CHECK_TEXT(problems.empty(), joined(problems).c_str());
      auto back = parse_topology_text(topology_text(t, "round trip"), "back.topo");
      CHECK_TEXT(back.is_ok(), back.status().message().c_str());
      STRCMP_EQUAL(topology_text(t, "x").c_str(), topology_text(back.value(), "x").c_str());
    }
  }
}

TEST(Topology, DuplicateCoordinateIsRefusedNamingItAndBothLines) {
  Topology t = gen("2x2x1", "af_xdp");
  const auto p = problems_after(t, "node = 3 host=h0 coord=1,1,0", "node = 3 host=h0 coord=1,0,0");
  CHECK_TEXT(any_has(p, "duplicate coordinate 1,0,0: node 3 has it, and node 1 (line "), joined(p).c_str());
  CHECK_TEXT(any_has(p, "no node has coordinate 1,1,0"), joined(p).c_str());
}

TEST(Topology, RanksMustBeZeroToNOnce) {
  Topology t = gen("2x1x1", "af_xdp");
  auto p = problems_after(t, "node = 1 host", "node = 0 host");
  CHECK_TEXT(any_has(p, "rank 0 appears twice (also on line "), joined(p).c_str());
  CHECK_TEXT(any_has(p, "no node has rank 1"), joined(p).c_str());
  p = problems_after(t, "node = 1 host", "node = 7 host");
  CHECK_TEXT(any_has(p, "rank 7 is out of range (dims 2x1x1 have ranks 0..1)"), joined(p).c_str());
}

// Dims that promise millions of nodes the file does not list: a few lines
// naming the first missing ones and how many more, not a line per node
// (found by the topology fuzzer: 224x162x162 took seconds to list).
TEST(Topology, MissingNodesAreListedBoundedWithHowManyMore) {
  auto t = parse_topology_text("partition = lo\ndims = 224x162x162\n", "big.topo");
  CHECK_TEXT(t.is_ok(), t.status().message().c_str());
  const auto p = check_topology(t.value());
  CHECK_TEXT(p.size() <= 40, joined(p).c_str());
  CHECK_TEXT(any_has(p, "dims 224x162x162 make 5878656 nodes; the file lists 0"), joined(p).c_str());
  CHECK_TEXT(any_has(p, "no node has coordinate 0,0,0"), joined(p).c_str());
  CHECK_TEXT(any_has(p, "... and 5878640 more coordinates"), joined(p).c_str());
  CHECK_TEXT(any_has(p, "... and 5878640 more ranks"), joined(p).c_str());
}

TEST(Topology, BothEndsOfACableMustAgree) {
  Topology t = gen("2x2x1", "af_xdp");
  // A label that is not the other end's.
  auto p = problems_after(t, "cable=t0.0.0x\n", "cable=A99\n");
  CHECK_TEXT(any_has(p, "cable 0,0,0 x+ <-> 1,0,0 x-: the ends carry different cable labels: 'A99' at 0,0,0 x+"),
             joined(p).c_str());
  // An MTU on one end only.
  p = problems_after(t, "cable=t0.0.0y\n", "mtu=9000 cable=t0.0.0y\n");
  CHECK_TEXT(any_has(p, "the ends name different MTUs: 9000 at 0,0,0 y+, (not given) at 0,1,0 y-"),
             joined(p).c_str());
  // Different media.
  p = problems_after(t, "port = x+ af_xdp iface=t0.0.0x+,queue=0", "port = x+ memif role=server,socket=/s/a,id=0");
  CHECK_TEXT(any_has(p, "0,0,0 x+ is memif (a memif link), 1,0,0 x- is af_xdp (an Ethernet link)"), joined(p).c_str());
}

TEST(Topology, SocketCablesNeedOneHostOneSocketAndOppositeRoles) {
  // The generator refuses socket links across hosts; edit one in by hand.
  Topology t = gen("2x1x1", "memif");
  auto p = problems_after(t, "node = 1 host=h0", "node = 1 host=h1");
  CHECK_TEXT(any_has(p, "memif joins processes of one host, but 0,0,0 x+ is on h0 and 1,0,0 x- on h1"),
             joined(p).c_str());
  p = problems_after(t, "role=client,socket=/tmp/toroid-topo-test/0-0-0x.sock",
                     "role=server,socket=/tmp/toroid-topo-test/0-0-0x.sock");
  CHECK_TEXT(any_has(p, "both ends are servers"), joined(p).c_str());
  Topology u = gen("2x1x1", "uring");
  p = problems_after(u, "path=/tmp/toroid-topo-test/1-0-0x.sock,role=client", "path=/tmp/other.sock,role=client");
  CHECK_TEXT(any_has(p, "the ends name different sockets"), joined(p).c_str());
}

TEST(Topology, OneInterfaceQueueIsOnePort) {
  Topology t = gen("2x2x1", "af_xdp");
  auto p = problems_after(t, "iface=t0.0.0y+,queue=0", "iface=t0.0.0x+,queue=0");
  CHECK_TEXT(any_has(p, "host h0: interface t0.0.0x+ queue 0 is named by both 0,0,0 x+ and 0,0,0 y+"),
             joined(p).c_str());
}

TEST(Topology, NodeErrorsNameTheNodeAndLine) {
  Topology t = gen("2x1x1", "af_xdp");
  auto p = problems_after(t, "port = x- af_xdp iface=t1.0.0x-,queue=0", "port = y+ af_xdp iface=t1.0.0x-,queue=0");
  CHECK_TEXT(any_has(p, "node 0 (0,0,0, line "), joined(p).c_str());
  CHECK_TEXT(any_has(p, "dimension y of dims 2x1x1 has size 1"), joined(p).c_str());
  p = problems_after(t, "port = x- af_xdp iface=t1.0.0x-,queue=0", "port = x- sim");
  CHECK_TEXT(any_has(p, "unknown driver 'sim'"), joined(p).c_str());
}

TEST(Topology, SyntaxErrorsNameTheLine) {
  auto r = parse_topology_text("partition = a\ndims = 2x1x1\nnode = 0 host=h coord=0,0,0\nport = q+ af_xdp iface=e\n",
                               "s.topo");
  CHECK(!r.is_ok());
  STRCMP_EQUAL("s.topo line 4: port: unknown direction 'q+' (x+ x- y+ y- z+ z-)", r.status().message().c_str());
  r = parse_topology_text("dims = 2x1x1\nnode = 0 host=h coord=0,0,0\n", "s.topo");
  STRCMP_EQUAL("s.topo: missing 'partition = ID'", r.status().message().c_str());
  r = parse_topology_text("partition = a\ndims = 2x1x1\nnode = 0 coord=0,0,0\n", "s.topo");
  STRCMP_EQUAL("s.topo line 3: node 0 has no host=NAME", r.status().message().c_str());
  r = parse_topology_text("partition = a\nport = x+ af_xdp iface=e\n", "s.topo");
  STRCMP_EQUAL("s.topo line 2: a port line before any node line", r.status().message().c_str());
  r = parse_topology_text("partition = a\ndims = 2x1x1\nnode = 0 host=h coord=5,0,0\n", "s.topo");
  CHECK_TEXT(r.status().message().find("s.topo line 3: node 0: ") == 0, r.status().message().c_str());
}

TEST(Topology, PersonalityOfARankHasItsPortsInDirectionOrderWithAttributes) {
  const char* text =
      "partition = lab-b\n"
      "dims = 2x2x1\n"
      "job = traffic\n"
      "seed = 9\n"
      "arg = pattern neighbor\n"
      "node = 0 host=n1 coord=0,0,0\n"
      "node = 1 host=n2 coord=1,0,0\n"
      "port = y- pci 0000:3b:00.3 numa=1 cable=B4\n"
      "port = x+ af_xdp iface=ens1f0,queue=2 mtu=1500 cable=A2\n"
      "port = y+ pci 0000:3b:00.2 numa=1 cable=B3 name=north\n"
      "port = x- af_xdp iface=ens1f1,queue=2 mtu=1500 cable=A1\n";
  auto t = parse_topology_text(text, "p.topo");
  CHECK_TEXT(t.is_ok(), t.status().message().c_str());
  auto p = personality_for_rank(t.value(), 1);
  CHECK_TEXT(p.is_ok(), p.status().message().c_str());
  STRCMP_EQUAL("partition lab-b dims 2x2x1 coord 1,0,0 job traffic seed 9 ports port0=x+ port1=x- north=y+ port3=y-",
               p->describe().c_str());
  UNSIGNED_LONGS_EQUAL(1500, p->ports[0].mtu);
  LONGS_EQUAL(1, p->ports[2].numa);
  STRCMP_EQUAL("A1", p->ports[1].cable.c_str());
  STRCMP_EQUAL("iface=ens1f0,queue=2", p->ports[0].address.c_str());
  STRCMP_EQUAL("neighbor", p->job_args.at("pattern").c_str());
  // The attributes survive the personality's own text form.
  auto back = parse_personality_text(personality_text(p.value(), "rank 1"), "rank1.txt");
  CHECK_TEXT(back.is_ok(), back.status().message().c_str());
  UNSIGNED_LONGS_EQUAL(1500, back->ports[1].mtu);
  LONGS_EQUAL(1, back->ports[3].numa);
  STRCMP_EQUAL("B4", back->ports[3].cable.c_str());
  CHECK(!personality_for_rank(t.value(), 2).is_ok());
  STRCMP_EQUAL("host n2, af_xdp ens1f0 q2, cable A2", describe_end(t.value(), Coord{{1, 0, 0}}, Dir::kXp).c_str());
}

TEST(Topology, CablingPlanListsEveryCableWithBothEnds) {
  Topology t = gen("2x2x1", "af_xdp", {"h0", "h1", "h2", "h3"});
  const std::string plan = cabling_plan(t);
  CHECK_TEXT(plan.find("partition lab-a: 2x2x1 torus, 4 nodes on 4 hosts, 8 cables") != std::string::npos, plan.c_str());
  CHECK_TEXT(plan.find("h1               rank 1 (1,0,0)") != std::string::npos, plan.c_str());
  // Cable t1.0.0x: 1,0,0 x+ on h1 to 0,0,0 x- on h0 (the wrap-around).
  CHECK_TEXT(plan.find("t1.0.0x      1,0,0 x+ h1           af_xdp t1.0.0x+ q0       -- 0,0,0 x- h0           af_xdp "
                       "t1.0.0x- q0") != std::string::npos,
             plan.c_str());
  size_t lines = 0;
  for (size_t at = plan.find(" -- "); at != std::string::npos; at = plan.find(" -- ", at + 1)) ++lines;
  UNSIGNED_LONGS_EQUAL(8, lines);
}

TEST(Topology, GeneratorNamesVethsAfterTheirCablesAndRealNicsByDirection) {
  STRCMP_EQUAL("t1.0.1x", cable_label(Coord{{1, 0, 1}}, Dir::kXp).c_str());
  STRCMP_EQUAL("t1.0.1x+", cable_iface(Coord{{1, 0, 1}}, Dir::kXp, true).c_str());
  STRCMP_EQUAL("t255.255.255z-", cable_iface(Coord{{255, 255, 255}}, Dir::kZp, false).c_str());
  CHECK(cable_iface(Coord{{255, 255, 255}}, Dir::kZp, false).size() < 16);  // IFNAMSIZ
  TopoGenOptions o;
  o.dims = Dims{{2, 1, 1}};
  o.driver = "pci";
  o.hosts = {"n1", "n2"};
  o.nics = {{Dir::kXp, "0000:3b:00.0"}, {Dir::kXm, "0000:3b:00.1"}};
  auto t = generate_topology(o);
  CHECK_TEXT(t.is_ok(), t.status().message().c_str());
  const auto problems = check_topology(t.value());
  CHECK_TEXT(problems.empty(), joined(problems).c_str());
  STRCMP_EQUAL("0000:3b:00.1", t->port_at(Coord{{1, 0, 0}}, Dir::kXm)->address.c_str());
  o.driver = "memif";
  o.socket_dir = "/run/toroid";
  CHECK(!generate_topology(o).is_ok());  // memif across two hosts
  o.driver = "pci";
  o.nics.erase(Dir::kXm);
  STRCMP_EQUAL("topology: no NIC given for direction x-", generate_topology(o).status().message().c_str());
}
