// Intercommunicators (MPI 3.1 section 6.6) and the message-based context
// agreement for sets that have no communicator of their own yet. An
// intercommunicator's context is agreed by both groups together, so a
// message from the remote group never meets another communicator's
// receives; the same context names a library communicator over both groups
// that carries its collectives (intercomm_coll.cc) and the exchanges of
// MPI_Comm_split, _create and _dup on it.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "mpi/comm_internal.h"

namespace toroid::mpi {

Status internal_send(uint32_t to, uint16_t ctx, uint32_t tag, const void* data, uint64_t len) {
  Messenger& m = rt().msgr();
  auto h = m.send_rank(to, ctx, tag, data, len);
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
  ContextTable::Walk walk;
  ContextTable::begin(&walk, static_cast<uint16_t>(ctx & 0x7fff));
  for (uint32_t rounds = 0;; ++rounds) {
    if (rounds > tuning::kContextAgreeRounds)
      return error(Code::kTimeout, "context agreement: %u rounds and a member still takes part in another", rounds);
    uint64_t mask[ContextTable::kRoundWords];
    table.offer(&walk, mask);
    if (me == leader) {
      for (uint32_t w : members) {
        if (w == me) continue;
        uint64_t theirs[ContextTable::kRoundWords];
        if (Status st = internal_recv(w, ctx, tag, theirs, sizeof theirs); !st) {
          table.drop(&walk);
          return st;
        }
        for (uint32_t i = 0; i < ContextTable::kRoundWords; ++i) mask[i] &= theirs[i];
      }
      for (uint32_t w : members)
        if (w != me)
          if (Status st = internal_send(w, ctx, tag, mask, sizeof mask); !st) {
            table.drop(&walk);
            return st;
          }
    } else {
      uint64_t mine[ContextTable::kRoundWords];
      std::memcpy(mine, mask, sizeof mask);
      if (Status st = internal_send(leader, ctx, tag, mine, sizeof mine); !st) {
        table.drop(&walk);
        return st;
      }
      if (Status st = internal_recv(leader, ctx, tag, mask, sizeof mask); !st) {
        table.drop(&walk);
        return st;
      }
    }
    uint16_t id = 0;
    switch (table.settle(&walk, mask, &id)) {
      case ContextTable::Round::kPicked:
        *agreed = id;
        return Status::ok();
      case ContextTable::Round::kNextWindow:
      case ContextTable::Round::kRetry:
        break;
      case ContextTable::Round::kExhausted:
        return error(Code::kOutOfRange, "context agreement: no context id is free on every member");
    }
  }
}

uint32_t inter_member(MPI_Comm c, uint32_t u) {
  if (u >= c->local_base && u < c->local_base + static_cast<uint32_t>(c->size)) return c->group->world[u - c->local_base];
  return c->remote->world[u - c->remote_base];
}

namespace {

// Every member's pair of values, indexed by library rank (both groups).
Status exchange_pairs(MPI_Comm c, int32_t a, int32_t b, std::vector<int32_t>* all) {
  int32_t mine[2] = {a, b};
  all->assign(2 * static_cast<size_t>(c->coll->size()), 0);
  LibraryOp op;
  op.name = g_call;
  op.args.kind = CollKind::kAllgather;
  op.args.dtype = DType::kInt32;
  op.args.send = mine;
  op.args.recv = all->data();
  op.args.count = 2;
  return run_blocking(c, op);
}

// The members of group g (local or remote, at library ranks base..) whose
// first value is `value`, ordered by their second value, then by rank.
std::vector<uint32_t> members_with(MPI_Group g, uint32_t base, const std::vector<int32_t>& all,
                                   int32_t value) {
  std::vector<std::tuple<int32_t, int, uint32_t>> part;
  for (int r = 0; r < g->size(); ++r) {
    const size_t u = base + static_cast<size_t>(r);
    if (all[2 * u] == value) part.emplace_back(all[2 * u + 1], r, g->world[static_cast<size_t>(r)]);
  }
  std::sort(part.begin(), part.end());
  std::vector<uint32_t> out;
  for (const auto& p : part) out.push_back(std::get<2>(p));
  return out;
}

// The context for the new intercommunicators, agreed over all of comm;
// MPI_COMM_NULL where this process has no part in one (MPI 3.1 6.4.2:
// also where its color is on one side only).
int finish_inter(MPI_Comm comm, const std::vector<uint32_t>& local, const std::vector<uint32_t>& remote,
                 bool member, MPI_Comm* newcomm) {
  uint16_t ctx = 0;
  if (Status st = agree_over(comm, &ctx); !st) return raise_status(comm, st);
  if (!member || local.empty() || remote.empty()) {
    rt().world().contexts().release(ctx);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  *newcomm = comm_new_inter(comm, local, remote, ctx);
  return *newcomm ? MPI_SUCCESS : raise(comm, MPI_ERR_INTERN, "could not make the intercommunicator");
}

}  // namespace

int inter_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  std::vector<int32_t> all;
  if (Status st = exchange_pairs(comm, color, key, &all); !st) return raise_status(comm, st);
  const bool member = color != MPI_UNDEFINED;
  std::vector<uint32_t> local, remote;
  if (member) {
    local = members_with(comm->group, comm->local_base, all, color);
    remote = members_with(comm->remote, comm->remote_base, all, color);
  }
  return finish_inter(comm, local, remote, member, newcomm);
}

int inter_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  // Each side names its own part; the other side learns it (in the
  // group's rank order) from every member's rank in its side's group.
  std::vector<int32_t> all;
  const int32_t grank = group->rank == MPI_UNDEFINED ? -1 : group->rank;
  if (Status st = exchange_pairs(comm, grank >= 0 ? 1 : 0, grank, &all); !st) return raise_status(comm, st);
  const std::vector<uint32_t> remote = members_with(comm->remote, comm->remote_base, all, 1);
  return finish_inter(comm, group->world, remote, grank >= 0, newcomm);
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
  return *newintercomm ? MPI_SUCCESS : raise(local_comm, MPI_ERR_INTERN, "could not make the intercommunicator");
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
