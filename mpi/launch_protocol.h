// How toroid-mpirun and an MPI process talk (mpi/launcher/, mpi/runtime.cc).
//
// The launcher starts every rank with these environment variables and one
// end of a socket pair on descriptor TOROID_MPI_CTL_FD. Over it, one line
// per message:
//   rank -> launcher   "up", "ready" (MPI_Init returned), "finalizing"
//                      (MPI_Finalize: the world barrier passed, links still
//                      served), "quiesced" (no longer polling its links),
//                      "abort CODE TEXT" (MPI_Abort or a fatal error; the
//                      process exits with CODE)
//   launcher -> rank   "quiesce" (every rank is finalizing: stop polling),
//                      "release" (every rank quiesced: close the ports),
//                      "stop TEXT" (another rank failed: exit now, saying TEXT)
// Two phases at the end for the reason the host rig has them: closing a
// memif port under a peer that still polls it can crash the peer.
#pragma once

namespace toroid::mpi {

constexpr const char* kEnvPersonality = "TOROID_MPI_PERSONALITY";  // the rank's personality file
constexpr const char* kEnvCtlFd = "TOROID_MPI_CTL_FD";              // the control socket
constexpr const char* kEnvTimeout = "TOROID_MPI_TIMEOUT";           // every blocking wait (duration)
constexpr const char* kEnvTrainTimeout = "TOROID_MPI_TRAIN_TIMEOUT";
constexpr const char* kEnvYield = "TOROID_MPI_YIELD";               // "1": more ranks than CPUs
constexpr const char* kEnvCpus = "TOROID_MPI_CPUS";                 // EAL lcore CPU list
constexpr const char* kEnvWait = "TOROID_MPI_WAIT";                 // "idle": blocking calls may sleep (default: spin)
constexpr const char* kEnvLog = "TOROID_MPI_LOG";                   // node log level (default warn)
constexpr const char* kEnvTopology = "TOROID_TOPOLOGY";             // deployment: the topology file
constexpr const char* kEnvRank = "TOROID_RANK";                     // deployment: the rank (else Slurm/PMIx)
constexpr const char* kEnvRepro = "TOROID_REPRO";                   // exact | fixed-order | none
constexpr const char* kEnvErrors = "TOROID_MPI_ERRORS";             // "return": errors before MPI_Init return
// Set by the qemu rig's PID 1 (firmware/pid1_app.h), where no launcher
// process holds a control link and a vCPU may stall for a second or two:
constexpr const char* kEnvLinkTimeout = "TOROID_MPI_LINK_TIMEOUT";  // a silent link goes down after this
constexpr const char* kEnvLinger = "TOROID_MPI_LINGER";             // no launcher: serve the links this long at the end
constexpr const char* kEnvEalLog = "TOROID_MPI_EAL_LOG";            // EAL's log level (default error)

}  // namespace toroid::mpi
