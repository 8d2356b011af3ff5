// Intercommunicators (MPI 3.1 section 6.6) and the message-based context
// agreement for sets that have no communicator of their own yet. An
// intercommunicator's point-to-point context is agreed by both groups
// together, so a message from the remote group never meets another
// communicator's receives; collectives on an intercommunicator are refused
// (MPI_ERR_COMM, "make an intracommunicator with MPI_Intercomm_merge").
#include <algorithm>
#include <cstring>

#include "mpi/comm_internal.h"

namespace toroid::mpi {

Status internal_send(uint32_t to, uint16_t ctx, uint32_t tag, const void* data, uint64_t len) {
  Messenger& m = rt().msgr();
  auto h = m.send(coord_of(to, rt().world().net().dims()), ctx, tag, data, len);
  if (!h) return h.status();
  const uint64_t handle = *h;
  Status st = rt().wait([&] { return m.send_done(handle) || !m.status(); }, g_call);
  if (!st) return st;
  return m.status();
}

Status internal_recv(uint32_t from, uint16_t ctx, uint32_t tag, void* data, uint64_t len) {
  RecvReq r;
  r.src = static_cast<int32_t>(from);
  r.context = ctx;
  r.tag = tag;
  r.buf = static_cast<uint8_t*>(data);
  r.cap = len;
  Messenger& m = rt().msgr();
  if (Status st = m.post(&r); !st) return st;
  Status st = rt().wait([&] { return r.done(); }, g_call);
  if (!st) {
    m.withdraw(&r);
    return st;
  }
  if (!r.status()) return r.status();
  if (r.length() != len)
    return error(Code::kInvalid, "mismatched sizes across ranks: %llu bytes from partition rank %u, %llu expected",
                 static_cast<unsigned long long>(r.length()), from, static_cast<unsigned long long>(len));
  return Status::ok();
}

// Rounds of: every member sends its offer to the leader (the lowest
// partition rank), the leader ANDs them and sends the result back, every
// member settles (collectives/context_table.h).
Status agree_by_messages(const std::vector<uint32_t>& members, uint16_t ctx, uint32_t tag, uint16_t* agreed) {
  ContextTable& table = rt().world().contexts();
  const uint32_t me = rt().rank();
  const uint32_t leader = *std::min_element(members.begin(), members.end());
  for (uint32_t window = 0, rounds = 0;; ++rounds) {
    if (rounds > tuning::kContextAgreeRounds)
      return error(Code::kTimeout, "context agreement: %u rounds and a member still takes part in another", rounds);
    uint64_t mask[ContextTable::kRoundWords];
    bool offered = false;
    table.offer(window, mask, &offered);
    if (me == leader) {
      for (uint32_t w : members) {
        if (w == me) continue;
        uint64_t theirs[ContextTable::kRoundWords];
        if (Status st = internal_recv(w, ctx, tag, theirs, sizeof theirs); !st) {
          (void)table.settle(window, mask, offered, nullptr);
          return st;
        }
        for (uint32_t i = 0; i < ContextTable::kRoundWords; ++i) mask[i] &= theirs[i];
      }
      for (uint32_t w : members)
        if (w != me)
          if (Status st = internal_send(w, ctx, tag, mask, sizeof mask); !st) return st;
    } else {
      uint64_t mine[ContextTable::kRoundWords];
      std::memcpy(mine, mask, sizeof mask);
      if (Status st = internal_send(leader, ctx, tag, mine, sizeof mine); !st) return st;
      if (Status st = internal_recv(leader, ctx, tag, mask, sizeof mask); !st) {
        std::memset(mask, 0, sizeof mask);
        (void)table.settle(window, mask, offered, nullptr);
        return st;
      }
    }
    uint16_t id = 0;
    switch (table.settle(window, mask, offered, &id)) {
      case ContextTable::Round::kPicked:
        *agreed = id;
        return Status::ok();
      case ContextTable::Round::kNextWindow:
        ++window;
        break;
      case ContextTable::Round::kRetry:
        window = 0;
        break;
      case ContextTable::Round::kExhausted:
        return error(Code::kOutOfRange, "context agreement: no context id is free on every member");
    }
  }
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Comm_remote_size, (MPI_Comm comm, int* size)) {
  MPI_ENTER("MPI_Comm_remote_size");
  if (int e = check_comm(comm)) return e;
  if (!comm->inter) return raise(comm, MPI_ERR_COMM, "%s is not an intercommunicator", comm_label(comm).c_str());
  if (!size) return raise(comm, MPI_ERR_ARG, "size is NULL");
  *size = comm->remote->size();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group)) {
  MPI_ENTER("MPI_Comm_remote_group");
  if (int e = check_comm(comm)) return e;
  if (!comm->inter) return raise(comm, MPI_ERR_COMM, "%s is not an intercommunicator", comm_label(comm).c_str());
  if (!group) return raise(comm, MPI_ERR_ARG, "group is NULL");
  *group = group_new(comm->remote->world);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                       int tag, MPI_Comm* newintercomm)) {
  MPI_ENTER("MPI_Intercomm_create");
  if (int e = check_intra(local_comm)) return e;
  if (!newintercomm) return raise(local_comm, MPI_ERR_ARG, "newintercomm is NULL");
  if (local_leader < 0 || local_leader >= local_comm->size)
    return raise(local_comm, MPI_ERR_RANK, "local_leader %d is not a rank of %s (%d ranks)", local_leader,
                 comm_label(local_comm).c_str(), local_comm->size);
  if (int e = check_send_tag(local_comm, tag)) return e;
  const bool leader = local_comm->rank == local_leader;
  // The leaders swap their groups over peer_comm (only they need it valid).
  std::vector<uint32_t> remote;
  uint64_t nremote = 0;
  if (leader) {
    if (int e = check_comm(peer_comm)) return e;
    if (int e = check_send_rank(peer_comm, remote_leader)) return e;
    if (remote_leader == MPI_PROC_NULL) return raise(peer_comm, MPI_ERR_RANK, "remote_leader is MPI_PROC_NULL");
    const uint32_t peer = peer_comm->peer_world(remote_leader);
    const uint32_t ptag = kInternalTagBase | static_cast<uint32_t>(tag);
    const uint64_t nlocal = local_comm->group->world.size();
    // The lower partition rank sends first; both sends are small and buffered anyway.
    if (Status st = internal_send(peer, peer_comm->p2p_ctx, ptag, &nlocal, sizeof nlocal); !st)
      return raise_status(local_comm, st);
    if (Status st = internal_recv(peer, peer_comm->p2p_ctx, ptag, &nremote, sizeof nremote); !st)
      return raise_status(local_comm, st);
    remote.resize(nremote);
    if (Status st = internal_send(peer, peer_comm->p2p_ctx, ptag, local_comm->group->world.data(), nlocal * 4); !st)
      return raise_status(local_comm, st);
    if (Status st = internal_recv(peer, peer_comm->p2p_ctx, ptag, remote.data(), nremote * 4); !st)
      return raise_status(local_comm, st);
  }
  // ... and tell their groups.
  LibraryOp op;
  op.name = g_call;
  op.args.kind = CollKind::kBcast;
  op.args.dtype = DType::kUint64;
  op.args.recv = &nremote;
  op.args.count = 1;
  op.args.root = static_cast<uint32_t>(local_leader);
  if (Status st = run_blocking(local_comm, op); !st) return raise_status(local_comm, st);
  remote.resize(nremote);
  LibraryOp op2;
  op2.name = g_call;
  op2.args = op.args;
  op2.args.dtype = DType::kUint32;
  op2.args.recv = remote.data();
  op2.args.count = nremote;
  if (Status st = run_blocking(local_comm, op2); !st) return raise_status(local_comm, st);
  for (uint32_t w : remote)
    if (local_comm->group->rank_of(w) != MPI_UNDEFINED)
      return raise(local_comm, MPI_ERR_COMM, "the local and remote groups overlap (partition rank %u is in both)", w);
  // One context for both groups, agreed by all of them.
  std::vector<uint32_t> all = local_comm->group->world;
  all.insert(all.end(), remote.begin(), remote.end());
  std::sort(all.begin(), all.end());
  uint16_t ctx = 0;
  const uint32_t atag = kInternalTagBase | 0x20000000u | static_cast<uint32_t>(tag & 0x1fffffff);
  if (Status st = agree_by_messages(all, rt().world().p2p_context(), atag, &ctx); !st)
    return raise_status(local_comm, st);
  *newintercomm = comm_new_inter(local_comm, local_comm->group->world, remote, ctx);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm)) {
  MPI_ENTER("MPI_Intercomm_merge");
  if (int e = check_comm(intercomm)) return e;
  if (!intercomm->inter)
    return raise(intercomm, MPI_ERR_COMM, "%s is not an intercommunicator", comm_label(intercomm).c_str());
  if (!newintracomm) return raise(intercomm, MPI_ERR_ARG, "newintracomm is NULL");
  MPI_Comm c = intercomm;
  const uint32_t tag = kInternalTagBase | (c->internal_tag++ & 0x3fffffffu);
  // Every member tells every member of the other group its `high`; the
  // groups then agree which goes first (the low one; on a tie, the one with
  // the lowest partition rank) and a context for the merged communicator.
  const uint32_t mine = high ? 1 : 0;
  for (uint32_t w : c->remote->world)
    if (Status st = internal_send(w, c->p2p_ctx, tag, &mine, 4); !st) return raise_status(c, st);
  uint32_t remote_high = 0;
  for (size_t i = 0; i < c->remote->world.size(); ++i) {
    uint32_t h = 0;
    if (Status st = internal_recv(c->remote->world[i], c->p2p_ctx, tag, &h, 4); !st) return raise_status(c, st);
    if (i == 0) remote_high = h;
  }
  bool local_first;
  if (mine != remote_high) local_first = mine == 0;
  else local_first = *std::min_element(c->group->world.begin(), c->group->world.end()) <
                     *std::min_element(c->remote->world.begin(), c->remote->world.end());
  std::vector<uint32_t> members = local_first ? c->group->world : c->remote->world;
  const auto& second = local_first ? c->remote->world : c->group->world;
  members.insert(members.end(), second.begin(), second.end());
  std::vector<uint32_t> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  uint16_t ctx = 0;
  if (Status st = agree_by_messages(sorted, c->p2p_ctx, tag, &ctx); !st) return raise_status(c, st);
  *newintracomm = comm_new_intra(c, members, ctx);
  return *newintracomm ? MPI_SUCCESS : raise(c, MPI_ERR_INTERN, "could not make the communicator");
}
