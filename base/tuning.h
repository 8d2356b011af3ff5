// Every tunable constant of the runtime, in one place, each next to the
// static_assert that keeps it sane. Change them here, nowhere else.
#pragma once
#include <cstdint>

namespace toroid::tuning {

// ---- event loop ------------------------------------------------------------
constexpr uint64_t kTimerTickNs = 1000;         // timer wheel slot width (1 us)
constexpr uint32_t kTimerWheelSlots = 1024;     // one revolution = 1.024 ms
static_assert((kTimerWheelSlots & (kTimerWheelSlots - 1)) == 0, "power of two");
constexpr uint32_t kIdleSpinRounds = 2000;      // idle rounds spent spinning
constexpr uint32_t kIdlePauseRounds = 2000;     // then rounds with a pause insn
constexpr uint64_t kIdleYieldNs = 20 * 1000 * 1000;    // yield mode: yield this long before sleeping
constexpr uint64_t kIdleSleepMinNs = 20 * 1000;        // first sleep
constexpr uint64_t kIdleSleepMaxNs = 1000 * 1000;      // sleeps double up to this
static_assert(kIdleSleepMinNs <= kIdleSleepMaxNs);

// ---- packets and ports -----------------------------------------------------
constexpr uint16_t kPacketHeadroom = 128;       // room for headers in front of data
constexpr uint32_t kBurst = 32;                 // rx/tx burst size
constexpr uint32_t kTxCopyMaxBytes = 256;       // DpdkPort: a shared frame up to this size goes to the PMD as a copy
constexpr uint32_t kPoolSlabPackets = 16;       // pools grow lazily by this many
// Sim port max frame (Ethernet header included; --frame-bytes): jumbo, as
// the host rig's memif ports carry; bulk data then takes a ninth of the
// frames (and events) that 1024-byte frames need.
constexpr uint32_t kSimFrameBytes = 9000;
constexpr uint32_t kSimPoolMaxPackets = 4096;   // per-node cap on sim packet buffers
static_assert(kSimFrameBytes >= 256 && kSimFrameBytes <= 9216);

// ---- sim link model (defaults; --link-latency / --link-bw override) ---------
constexpr uint64_t kSimLinkLatencyNs = 100;     // wire + switch-less hop latency
constexpr double kSimLinkBytesPerNs = 2.0;      // 2 GB/s per direction
constexpr uint64_t kSimTxBacklogNs = 20 * 1000; // a port takes no more than 20 us of queued bytes
constexpr uint32_t kSimRxQueueMax = 4096;       // rx ring cap per sim port (overflow is counted)
constexpr uint64_t kSimReorderHoldNs = 2000;    // a reordered frame is held back up to this
constexpr uint32_t kSimMaxStepRounds = 100000;  // guard: one node step never spins forever
constexpr uint32_t kSimRegionsPerThread = 8;     // sim scheduler: shares of the nodes per thread

// ---- the sim's "bgl" link model: Blue Gene/L's published figures ------------
// Sources, and which figures could be checked, in docs/sim.md ("The bgl
// link model"). BG/L gives whole-network latencies for its collective and
// barrier networks; the model spreads them over the hops of Toroid's
// emulated tree on 64x32x32 (depth 64), see firmware/sim_link_model.cc.
constexpr double kBglTorusBytesPerNs = 0.175;   // 1.4 Gb/s per link and direction (2 bits per 700 MHz cycle)
constexpr uint64_t kBglTorusHopNs = 100;        // torus hardware latency per hop (about)
constexpr uint32_t kBglTorusChunkBytes = 32;    // torus packets: 32..256 bytes in 32-byte chunks
constexpr double kBglTreeBytesPerNs = 0.35;     // collective network: 2.8 Gb/s per link and direction
constexpr uint32_t kBglTreePacketBytes = 256;   // collective-network packet payload
constexpr uint64_t kBglTreeOneWayNs = 2500;     // collective network, one way over 65,536 nodes
constexpr uint64_t kBglBarrierNs = 1500;        // global barrier over 65,536 nodes
constexpr uint64_t kBglDoubleSumNs = 10000;     // two-pass double-precision sum over 65,536 nodes
constexpr uint32_t kBglTreeDepth64K = 64;       // Toroid's world tree on 64x32x32: 32 + 16 + 16 hops

// ---- reliable link layer (netstack/link.h) -----------------------------------
constexpr uint16_t kVcCredits = 8;              // receive buffers per VC per link
constexpr uint16_t kVcCreditsHost = 16;         // the same on a host rig's real links (memif, NICs)
static_assert(kVcCreditsHost <= 255, "a hello advertises it in one byte");
constexpr uint32_t kLinkTxQueue = 64;           // unsequenced frames waiting per link
constexpr uint64_t kLinkRtoSimNs = 5 * 1000;    // first retransmission timeout (sim)
constexpr uint64_t kLinkRtoMaxSimNs = 200 * 1000;
constexpr uint64_t kLinkAckDelaySimNs = 1000;   // bare ack if nothing to piggyback on
constexpr uint64_t kLinkDownSimNs = 2 * 1000 * 1000;   // no progress 2 ms (virtual) => down
constexpr uint64_t kLinkRtoRealNs = 1000 * 1000;      // minimum RTO; srtt + 4 rttvar above it
constexpr uint64_t kLinkRtoMaxRealNs = 50 * 1000 * 1000;
// A bare ack waits this long for a data frame to carry it. On eight nodes
// on two cores an operation takes 40-120 us, so 20 us sent a bare ack for
// every 2.6 data frames; 200 us sends a tenth as many, and 8 alternating
// pairs of 2x2x2 runs were no slower (docs/bench.md, "fewer bare acks").
// Streams never wait for it: their acks go at the low-water marks.
constexpr uint64_t kLinkAckDelayRealNs = 200 * 1000;
constexpr uint64_t kLinkDownRealNs = 500 * 1000 * 1000;  // 0.5 s
constexpr uint64_t kCarrierCheckNs = 1000 * 1000;  // an idle link reads its port's carrier every 1 ms
// An idle link probes its peer after this much silence; one that hears
// nothing for the link-down time above goes down (a hung neighbour). In the
// sim, seven probes fit before the deadline: with four, a link idle through
// a lossy medium's drop=0.05,corrupt=0.01 lost three probe rounds in a row
// (about 1 in 640) often enough to fail an 8x8x8 self-test at 6.7 ms.
constexpr uint64_t kLinkKeepaliveSimNs = 250 * 1000;
constexpr uint64_t kLinkKeepaliveRealNs = 100 * 1000 * 1000;
static_assert(kLinkKeepaliveSimNs < kLinkDownSimNs && kLinkKeepaliveRealNs < kLinkDownRealNs,
              "a silent link must be probed before it is declared down");
static_assert(kLinkRtoSimNs <= kLinkRtoMaxSimNs && kLinkRtoRealNs <= kLinkRtoMaxRealNs);
static_assert(4 * kLinkAckDelayRealNs <= kLinkRtoRealNs, "a delayed ack must come well before the sender's timeout");
static_assert(kLinkRtoMaxSimNs < kLinkDownSimNs && kLinkRtoMaxRealNs < kLinkDownRealNs,
              "a link must retry at least once before it is declared down");

// ---- router (netstack/netstack.h) ------------------------------------------
constexpr uint32_t kInjectQueue = 256;          // local packets waiting to enter the network

// ---- point-to-point messages (netstack/p2p.h) -------------------------------
constexpr uint32_t kP2pWindow = 64;             // segments in flight per destination (<= 64: seq map)
constexpr uint32_t kP2pMaxHeld = 1024;          // frames held for unexpected messages, all sources
constexpr uint64_t kP2pStoreCap = 64ull << 20;  // bytes of spilled unexpected messages
constexpr uint64_t kP2pMaxMessage = 0xffffffffull;  // bytes of one message (the wire's 32-bit size)
constexpr uint32_t kP2pSpareBuffers = 64;       // recycled spill buffers a Messenger keeps
static_assert(kP2pWindow >= 4 && kP2pWindow <= 64, "the receiver tracks 64 message numbers ahead");

// ---- combine and barrier networks (netstack/tree/) ---------------------------
constexpr uint32_t kTreeWindow = 8;             // packets a node may be ahead per tree class
constexpr uint8_t kTreeClassWorld = 1;          // class id of the world tree (root rank 0)
constexpr uint8_t kBarrierChannelWorld = 0;     // barrier-network channel of the world communicator

// ---- boot and link training ------------------------------------------------
constexpr uint64_t kHelloIntervalNs = 200 * 1000;      // first hello resend after 200 us,
constexpr uint64_t kHelloIntervalMaxNs = 20 * 1000 * 1000;  // then doubling up to 20 ms
constexpr uint64_t kTrainTimeoutSimNs = 20 * 1000 * 1000;   // 20 ms of virtual time
constexpr uint64_t kTrainTimeoutRealNs = 5ull * 1000 * 1000 * 1000;  // 5 s on real rigs

// ---- collectives -----------------------------------------------------------
constexpr uint64_t kCollTimeoutSimNs = 500ull * 1000 * 1000;       // 0.5 s virtual
constexpr uint64_t kCollTimeoutRealNs = 30ull * 1000 * 1000 * 1000; // 30 s real
// Exact float sums run in slices of this many values (256 KiB of doubles,
// whole 64-value blocks): a slice's data stays in cache through both passes.
constexpr uint32_t kExactSliceValues = 32768;
// After an operation, the longest a node waits for its own frames to leave
// its transmit queues before it stops polling (a bench check, an MPI
// program's own work): NetStack::tx_drained().
constexpr uint64_t kTxDrainNs = 100ull * 1000 * 1000;
constexpr uint32_t kContextAgreeRounds = 1000;  // rounds of one context agreement before it gives up (retries while a member takes part in another)
constexpr uint64_t kJobTimeoutSimNs = 1000ull * 1000 * 1000;        // 1 s virtual
constexpr uint64_t kJobTimeoutRealNs = 120ull * 1000 * 1000 * 1000; // 2 min real

}  // namespace toroid::tuning
