// The host rig's wiring and the node event lines, without processes.
#include <set>
#include <string>

#include "firmware/personality.h"
#include "firmware/rig/events.h"
#include "firmware/rig/wiring.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::rig;

namespace {

Dims dims_of(const char* s) {
  auto d = parse_dims(s);
  CHECK(d.is_ok());
  return *d;
}

WiringOptions opts(const char* dims, const char* driver) {
  WiringOptions w;
  w.dims = dims_of(dims);
  w.driver = driver;
  w.socket_dir = "/tmp/toroid-rig.test";
  return w;
}

}  // namespace

TEST_GROUP(HostWiring){};

TEST(HostWiring, EveryCableHasOneSocketAndBothEndsNameIt) {
  for (const char* shape : {"2x1x1", "2x2x2", "4x2x1", "3x3x3"}) {
    WiringOptions w = opts(shape, "memif");
    auto r = wire_partition(w);
    CHECK_TEXT(r.is_ok(), r.status().message().c_str());
    const auto& ps = r.value();
    LONGS_EQUAL(w.dims.nodes(), ps.size());
    // Each socket appears exactly twice: once as server, once as client,
    // on ports of opposite directions of neighbouring nodes.
    std::multiset<std::string> servers, clients;
    for (const auto& p : ps) {
      CHECK(validate(p).is_ok());
      for (const auto& port : p.ports) {
        const Cable k = cable_at(w.dims, w.socket_dir, p.coord, port.dir);
        CHECK(port.address.find("socket=" + k.socket + ",") != std::string::npos);
        const bool server = port.address.find("role=server") != std::string::npos;
        (server ? servers : clients).insert(k.socket);
        if (server) {
          CHECK(k.server == p.coord);
        } else {
          CHECK(k.client == p.coord);
        }
      }
    }
    const auto all = cables(w.dims, w.socket_dir);
    LONGS_EQUAL(all.size(), servers.size());
    LONGS_EQUAL(all.size(), clients.size());
    for (const auto& k : all) {
      LONGS_EQUAL(1, servers.count(k.socket));
      LONGS_EQUAL(1, clients.count(k.socket));
    }
  }
}

TEST(HostWiring, TwoNodeRingHasTwoCablesBetweenTheSamePair) {
  const auto all = cables(dims_of("2x1x1"), "/s");
  LONGS_EQUAL(2, all.size());
  STRCMP_EQUAL("/s/0-0-0x.sock", all[0].socket.c_str());
  STRCMP_EQUAL("/s/1-0-0x.sock", all[1].socket.c_str());
  CHECK(all[0].client == all[1].server);
}

TEST(HostWiring, PersonalityTextReadsBackTheSame) {
  for (const char* driver : {"memif", "uring"}) {
    WiringOptions w = opts("2x2x2", driver);
    w.job = "traffic";
    w.seed = 42;
    w.job_args["pattern"] = "uniform";
    auto r = wire_partition(w);
    CHECK(r.is_ok());
    for (const auto& p : r.value()) {
      auto back = parse_personality_text(personality_text(p), "test");
      CHECK_TEXT(back.is_ok(), back.status().message().c_str());
      STRCMP_EQUAL(p.describe().c_str(), back.value().describe().c_str());
      LONGS_EQUAL(p.ports.size(), back.value().ports.size());
      for (size_t i = 0; i < p.ports.size(); ++i) {
        STRCMP_EQUAL(p.ports[i].driver.c_str(), back.value().ports[i].driver.c_str());
        STRCMP_EQUAL(p.ports[i].address.c_str(), back.value().ports[i].address.c_str());
      }
      STRCMP_EQUAL("uniform", back.value().job_args.at("pattern").c_str());
    }
  }
}

TEST(HostWiring, UringAddressesArePathAndRole) {
  auto r = wire_partition(opts("2x1x1", "uring"));
  CHECK(r.is_ok());
  STRCMP_EQUAL("path=/tmp/toroid-rig.test/0-0-0x.sock,role=server", r.value()[0].ports[0].address.c_str());
  STRCMP_EQUAL("path=/tmp/toroid-rig.test/1-0-0x.sock,role=client", r.value()[0].ports[1].address.c_str());
}

TEST(HostWiring, SocketDirsThePersonalityCannotCarryAreRefused) {
  const Dims d = dims_of("2x2x2");
  CHECK(check_socket_dir("/tmp/ok", d).is_ok());
  CHECK_FALSE(check_socket_dir("relative/dir", d).is_ok());
  CHECK_FALSE(check_socket_dir("/tmp/with space", d).is_ok());
  CHECK_FALSE(check_socket_dir("/tmp/a,b", d).is_ok());
  CHECK_FALSE(check_socket_dir("/tmp/a#b", d).is_ok());
  CHECK_FALSE(check_socket_dir("/" + std::string(100, 'x'), d).is_ok());  // > sockaddr_un
  CHECK_FALSE(wire_partition(opts("2x2x2", "tcp")).is_ok());
}

TEST(HostWiring, RigCoordinatesTakeDotsOrCommas) {
  const Dims d = dims_of("2x2x2");
  auto a = parse_rig_coord("1.0.1", d);
  auto b = parse_rig_coord("1,0,1", d);
  CHECK(a.is_ok() && b.is_ok());
  CHECK(*a == *b);
  CHECK_FALSE(parse_rig_coord("2,0,0", d).is_ok());
}

TEST_GROUP(HostEvents){};

TEST(HostEvents, ParsesQuotedValuesAndBareWords) {
  NodeEvent e;
  CHECK(parse_node_event("verdict node=1,0,1 FAIL reason=\"link down: a \\\"b\\\" c\" cases=3 ms=12.5", &e));
  STRCMP_EQUAL("verdict", e.kind.c_str());
  STRCMP_EQUAL("1,0,1", e.get("node").c_str());
  STRCMP_EQUAL("link down: a \"b\" c", e.get("reason").c_str());
  STRCMP_EQUAL("3", e.get("cases").c_str());
  LONGS_EQUAL(1, e.words.size());
  STRCMP_EQUAL("FAIL", e.words[0].c_str());
  CHECK(parse_node_event("case node=0,0,0 coll=\"allreduce\" algo=\"torus-ring\" name=\"int64 sum n=1001\" "
                         "result=PASS ns=123 detail=\"\"", &e));
  STRCMP_EQUAL("int64 sum n=1001", e.get("name").c_str());
  STRCMP_EQUAL("", e.get("detail").c_str());
}

TEST(HostEvents, LogLinesAreNotEvents) {
  NodeEvent e;
  CHECK_FALSE(parse_node_event("[node 1,0,1] trained 6 links", &e));
  CHECK_FALSE(parse_node_event("EAL: Detected 2 lcores", &e));
  CHECK_FALSE(parse_node_event("case without a node field", &e));
  CHECK_FALSE(parse_node_event("verdict node=1,0,1 FAIL reason=\"unterminated", &e));
}
