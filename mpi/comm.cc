// Communicators (MPI 3.1 sections 6.4 and 6.8): MPI_COMM_WORLD is the
// node's world communicator, every other intracommunicator a library
// communicator over its ranks, made with a context its members agreed
// (collectives/context_table.h): MPI_Comm_dup, _split, _create agree over
// the parent, MPI_Comm_create_group among the group's members by messages.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "mpi/comm_internal.h"
#include "mpi/datatype.h"
#include "mpi/request.h"
#include "mpi/topo.h"

toroid_mpi_comm toroid_mpi_comm_world, toroid_mpi_comm_self;

namespace toroid::mpi {

namespace {

std::vector<MPI_Comm>& live() {
  static auto* v = new std::vector<MPI_Comm>();
  return *v;
}

}  // namespace

void comm_register(MPI_Comm c) { live().push_back(c); }

void comm_unregister(MPI_Comm c) {
  auto& v = live();
  auto it = std::find(v.begin(), v.end(), c);
  if (it != v.end()) v.erase(it);
}

void comm_destroy(MPI_Comm c) {
  comm_unregister(c);
  reports_disarm(c);
  engine_forget(c);
  c->magic = 0;
  c->owned.reset();  // a library communicator gives its context back itself
  c->coll = nullptr;
  group_release(c->group);
  group_release(c->remote);
  c->group = c->remote = nullptr;
  errhandler_release(c->errh);
  c->errh = nullptr;
  c->attrs.clear();
  c->topo.reset();
  c->hints.clear();
  if (!c->predefined) delete c;
}

void comm_release_request(MPI_Comm c) {
  if (c->requests > 0) --c->requests;
  if (c->requests == 0 && c->user_freed) comm_destroy(c);
}

void comm_free_all() {
  while (!live().empty()) comm_destroy(live().back());
}

void comm_setup() {
  Comm& w = rt().world();
  std::vector<uint32_t> all(rt().size());
  for (uint32_t r = 0; r < rt().size(); ++r) all[r] = r;
  MPI_Comm world = MPI_COMM_WORLD;
  world->magic = kMagicComm;
  world->predefined = true;
  world->coll = &w;
  world->group = group_new(all);
  world->group->predefined = true;
  world->p2p_ctx = w.p2p_context();
  world->rank = static_cast<int>(rt().rank());
  world->size = static_cast<int>(rt().size());
  world->name = "MPI_COMM_WORLD";
  world->errh = MPI_ERRORS_ARE_FATAL;
  world->repro = rt().default_repro();
  comm_register(world);
  reports_arm(world);
  // MPI_COMM_SELF: only this node is a member, so its lowest free id here is agreed.
  uint16_t ctx = ContextTable::kFirstAgreed;
  while (!w.contexts().reserve(ctx)) ++ctx;
  MPI_Comm self = MPI_COMM_SELF;
  self->magic = kMagicComm;
  self->predefined = true;
  self->owned = std::move(w.create({rt().rank()}, ctx).value());
  self->coll = self->owned.get();
  self->group = group_new({rt().rank()});
  self->group->predefined = true;
  self->p2p_ctx = self->coll->p2p_context();
  self->rank = 0;
  self->size = 1;
  self->name = "MPI_COMM_SELF";
  self->errh = MPI_ERRORS_ARE_FATAL;
  self->repro = world->repro;
  comm_register(self);
}

void comm_finalize_self_attrs() { (void)attrs_delete_comm(MPI_COMM_SELF); }

MPI_Comm comm_new_intra(MPI_Comm parent, const std::vector<uint32_t>& members, uint16_t ctx) {
  auto lib = rt().world().create(members, ctx);
  if (!lib) {
    rt().world().contexts().release(ctx);
    return MPI_COMM_NULL;
  }
  auto* c = new toroid_mpi_comm();
  c->magic = kMagicComm;
  c->owned = std::move(lib.value());
  c->coll = c->owned.get();
  c->group = group_new(members);
  c->p2p_ctx = c->coll->p2p_context();
  c->rank = c->group->rank;
  c->size = c->group->size();
  c->errh = parent && parent->errh ? parent->errh : MPI_ERRORS_ARE_FATAL;
  errhandler_retain(c->errh);
  c->repro = parent ? parent->repro : rt().default_repro();
  comm_register(c);
  reports_arm(c);
  return c;
}

MPI_Comm comm_new_inter(MPI_Comm parent, const std::vector<uint32_t>& local, const std::vector<uint32_t>& remote,
                        uint16_t ctx) {
  // Its collectives run on a library communicator over both groups (the
  // group holding the lowest partition rank first), which owns `ctx`: the
  // same order on every member of either group.
  const bool local_first = *std::min_element(local.begin(), local.end()) < *std::min_element(remote.begin(), remote.end());
  std::vector<uint32_t> both = local_first ? local : remote;
  both.insert(both.end(), (local_first ? remote : local).begin(), (local_first ? remote : local).end());
  auto lib = rt().world().create(both, ctx);
  if (!lib) {
    rt().world().contexts().release(ctx);
    return MPI_COMM_NULL;
  }
  auto* c = new toroid_mpi_comm();
  c->magic = kMagicComm;
  c->inter = true;
  c->owned = std::move(lib.value());
  c->coll = c->owned.get();
  c->local_base = local_first ? 0 : static_cast<uint32_t>(remote.size());
  c->remote_base = local_first ? static_cast<uint32_t>(local.size()) : 0;
  c->group = group_new(local);
  c->remote = group_new(remote);
  c->p2p_ctx = c->coll->p2p_context();
  c->rank = c->group->rank;
  c->size = c->group->size();
  c->errh = parent && parent->errh ? parent->errh : MPI_ERRORS_ARE_FATAL;
  errhandler_retain(c->errh);
  c->repro = parent ? parent->repro : rt().default_repro();
  comm_register(c);
  return c;
}

Status agree_over(MPI_Comm comm, uint16_t* ctx) {
  AgreeOp op;
  op.name = g_call;
  Status st = run_blocking(comm, op);
  if (st) *ctx = op.ctx;
  return st;
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Comm_size, (MPI_Comm comm, int* size)) {
  MPI_ENTER("MPI_Comm_size");
  if (int e = check_comm(comm)) return e;
  if (!size) return raise(comm, MPI_ERR_ARG, "size is NULL");
  *size = comm->size;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_rank, (MPI_Comm comm, int* rank)) {
  MPI_ENTER("MPI_Comm_rank");
  if (int e = check_comm(comm)) return e;
  if (!rank) return raise(comm, MPI_ERR_ARG, "rank is NULL");
  *rank = comm->rank;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result)) {
  MPI_ENTER("MPI_Comm_compare");
  if (int e = check_comm(comm1)) return e;
  if (int e = check_comm(comm2)) return e;
  if (!result) return raise(comm1, MPI_ERR_ARG, "result is NULL");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (comm1->inter != comm2->inter) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  int g = MPI_UNEQUAL, r = MPI_IDENT;
  (void)PMPI_Group_compare(comm1->group, comm2->group, &g);
  if (comm1->inter) (void)PMPI_Group_compare(comm1->remote, comm2->remote, &r);
  const int worst = std::max(g, r);
  *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst == MPI_SIMILAR ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_test_inter, (MPI_Comm comm, int* flag)) {
  MPI_ENTER("MPI_Comm_test_inter");
  if (int e = check_comm(comm)) return e;
  if (!flag) return raise(comm, MPI_ERR_ARG, "flag is NULL");
  *flag = comm->inter;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_group, (MPI_Comm comm, MPI_Group* group)) {
  MPI_ENTER("MPI_Comm_group");
  if (int e = check_comm(comm)) return e;
  if (!group) return raise(comm, MPI_ERR_ARG, "group is NULL");
  *group = group_new(comm->group->world);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_set_name, (MPI_Comm comm, const char* comm_name)) {
  MPI_ENTER("MPI_Comm_set_name");
  if (int e = check_comm(comm)) return e;
  if (!comm_name) return raise(comm, MPI_ERR_ARG, "the name is NULL");
  comm->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen)) {
  MPI_ENTER("MPI_Comm_get_name");
  if (int e = check_comm(comm)) return e;
  if (!comm_name || !resultlen) return raise(comm, MPI_ERR_ARG, "comm_name or resultlen is NULL");
  std::memcpy(comm_name, comm->name.c_str(), comm->name.size() + 1);
  *resultlen = static_cast<int>(comm->name.size());
  return MPI_SUCCESS;
}

namespace {

// MPI_Comm_dup's work once the context is agreed: the same ranks, its
// attributes copied by their callbacks, its topology.
int finish_dup(MPI_Comm comm, uint16_t ctx, MPI_Comm* newcomm) {
  MPI_Comm c = comm->inter ? comm_new_inter(comm, comm->group->world, comm->remote->world, ctx)
                           : comm_new_intra(comm, comm->group->world, ctx);
  if (!c) return raise(comm, MPI_ERR_INTERN, "could not make the duplicate");
  if (comm->topo) c->topo = topo_clone(comm->topo.get());
  c->hints = comm->hints;
  if (int e = attrs_copy_comm(comm, c)) {
    comm_destroy(c);
    return e;
  }
  *newcomm = c;
  return MPI_SUCCESS;
}

struct IdupOp : AgreeOp {
  MPI_Comm* out = nullptr;
  // MPI_Comm_idup_with_info: the info's pairs as they were at the call (the
  // caller may free or change it while the operation runs).
  bool with_info = false;
  std::vector<std::pair<std::string, std::string>> info;
  Status done(MPI_Comm c, const Status& st) override {
    Status s = AgreeOp::done(c, st);
    if (!s) return s;
    if (finish_dup(c, ctx, out) != MPI_SUCCESS) return error(Code::kInternal, "%s: the copy failed", name);
    if (with_info) {
      toroid_mpi_info hints;
      hints.magic = kMagicInfo;
      hints.kv = info;
      if (PMPI_Comm_set_info(*out, &hints) != MPI_SUCCESS)
        return error(Code::kInvalid, "%s: the info was refused (see MPI_Comm_set_info)", name);
    }
    return s;
  }
};

}  // namespace

TOROID_MPI_API(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_dup");
  if (int e = check_comm(comm)) return e;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "newcomm is NULL");
  uint16_t ctx = 0;
  if (Status st = agree_over(comm, &ctx); !st) return raise_status(comm, st);
  return finish_dup(comm, ctx, newcomm);
}

TOROID_MPI_API(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_dup_with_info");
  if (info != MPI_INFO_NULL)
    if (int e = check_info(info)) return e;
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && info != MPI_INFO_NULL) return PMPI_Comm_set_info(*newcomm, info);
  return rc;
}

TOROID_MPI_API(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request)) {
  MPI_ENTER("MPI_Comm_idup");
  if (int e = check_comm(comm)) return e;
  if (!newcomm || !request) return raise(comm, MPI_ERR_ARG, "newcomm or request is NULL");
  auto* op = new IdupOp();
  op->name = "MPI_Comm_idup";
  op->out = newcomm;
  *newcomm = MPI_COMM_NULL;
  *request = run_nonblocking(comm, op);
  return MPI_SUCCESS;
}

// MPI 4.0 (7.4.2): MPI_Comm_idup, then the info's hints on the new
// communicator, as MPI_Comm_dup_with_info does.
TOROID_MPI_API(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request)) {
  MPI_ENTER("MPI_Comm_idup_with_info");
  if (int e = check_comm(comm)) return e;
  if (info != MPI_INFO_NULL)
    if (int e = check_info(info)) return e;
  if (!newcomm || !request) return raise(comm, MPI_ERR_ARG, "newcomm or request is NULL");
  auto* op = new IdupOp();
  op->name = "MPI_Comm_idup_with_info";
  op->out = newcomm;
  op->with_info = info != MPI_INFO_NULL;
  if (op->with_info) op->info = info->kv;
  *newcomm = MPI_COMM_NULL;
  *request = run_nonblocking(comm, op);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_split");
  if (int e = check_comm(comm)) return e;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "newcomm is NULL");
  if (color < 0 && color != MPI_UNDEFINED)
    return raise(comm, MPI_ERR_ARG, "color %d is negative (and not MPI_UNDEFINED)", color);
  if (comm->inter) return inter_split(comm, color, key, newcomm);
  // Every rank's (color, key), then one context for all the parts (they are disjoint).
  const int n = comm->size;
  int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(n));
  LibraryOp op;
  op.name = g_call;
  op.args.kind = CollKind::kAllgather;
  op.args.dtype = DType::kInt32;
  op.args.send = mine;
  op.args.recv = all.data();
  op.args.count = 2;
  if (Status st = run_blocking(comm, op); !st) return raise_status(comm, st);
  uint16_t ctx = 0;
  if (Status st = agree_over(comm, &ctx); !st) return raise_status(comm, st);
  if (color == MPI_UNDEFINED) {
    rt().world().contexts().release(ctx);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<std::tuple<int32_t, int, uint32_t>> part;  // (key, parent rank, partition rank)
  for (int r = 0; r < n; ++r)
    if (all[2 * static_cast<size_t>(r)] == color)
      part.emplace_back(all[2 * static_cast<size_t>(r) + 1], r, comm->group->world[static_cast<size_t>(r)]);
  std::sort(part.begin(), part.end());
  std::vector<uint32_t> members;
  for (const auto& p : part) members.push_back(std::get<2>(p));
  *newcomm = comm_new_intra(comm, members, ctx);
  return *newcomm ? MPI_SUCCESS : raise(comm, MPI_ERR_INTERN, "could not make the communicator");
}

// The hardware levels below a partition, for MPI 4.0's guided splits: one
// MPI process per node, so the one level is the node itself, which is also
// the shared-memory domain (the reserved "mpi_shared_memory").
constexpr const char* kHwResourceKey = "mpi_hw_resource_type";
constexpr const char* kHwNode = "mpi_shared_memory";

TOROID_MPI_API(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_split_type");
  if (int e = check_intra(comm)) return e;
  if (info != MPI_INFO_NULL)
    if (int e = check_info(info)) return e;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "newcomm is NULL");
  // One MPI process per node: a process shares memory with itself only.
  switch (split_type) {
    case MPI_UNDEFINED:
      return PMPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
    case MPI_COMM_TYPE_SHARED:
      return PMPI_Comm_split(comm, comm->rank, key, newcomm);
    case MPI_COMM_TYPE_HW_GUIDED: {
      // The level named by the info key; MPI_COMM_NULL when there is no
      // key or the level is not one of ours (MPI 4.0 7.4.2).
      bool known = false;
      if (info != MPI_INFO_NULL)
        for (const auto& [k, v] : info->kv)
          if (k == kHwResourceKey) known = v == kHwNode;
      return PMPI_Comm_split(comm, known ? comm->rank : MPI_UNDEFINED, key, newcomm);
    }
    case MPI_COMM_TYPE_HW_UNGUIDED: {
      // Strict subsets at the highest level that splits comm: the nodes,
      // unless comm is one process already (then MPI_COMM_NULL). The level
      // is named in the info argument and in the new communicator's info.
      const bool split = comm->group->size() > 1;
      if (int e = PMPI_Comm_split(comm, split ? comm->rank : MPI_UNDEFINED, key, newcomm)) return e;
      if (*newcomm != MPI_COMM_NULL) {
        if (info != MPI_INFO_NULL) (void)PMPI_Info_set(info, kHwResourceKey, kHwNode);
        (*newcomm)->hints.emplace_back(kHwResourceKey, kHwNode);
      }
      return MPI_SUCCESS;
    }
    default:
      return raise(comm, MPI_ERR_ARG,
                   "split type %d (MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED or "
                   "MPI_UNDEFINED)",
                   split_type);
  }
}

TOROID_MPI_API(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_create");
  if (int e = check_comm(comm)) return e;
  if (int e = check_group(group)) return e;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "newcomm is NULL");
  for (uint32_t w : group->world)
    if (comm->group->rank_of(w) == MPI_UNDEFINED)
      return raise(comm, MPI_ERR_GROUP, "the group holds a process (partition rank %u) that is not in %s%s", w,
                   comm->inter ? "the local group of " : "", comm_label(comm).c_str());
  if (comm->inter) return inter_create(comm, group, newcomm);
  uint16_t ctx = 0;
  if (Status st = agree_over(comm, &ctx); !st) return raise_status(comm, st);
  if (group->rank == MPI_UNDEFINED) {
    rt().world().contexts().release(ctx);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  *newcomm = comm_new_intra(comm, group->world, ctx);
  return *newcomm ? MPI_SUCCESS : raise(comm, MPI_ERR_INTERN, "could not make the communicator");
}

TOROID_MPI_API(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Comm_create_group");
  if (int e = check_intra(comm)) return e;
  if (int e = check_group(group)) return e;
  if (int e = check_send_tag(comm, tag)) return e;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "newcomm is NULL");
  if (group->rank == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  for (uint32_t w : group->world)
    if (comm->group->rank_of(w) == MPI_UNDEFINED)
      return raise(comm, MPI_ERR_GROUP, "the group holds a process (partition rank %u) that is not in %s", w,
                   comm_label(comm).c_str());
  uint16_t ctx = 0;
  const uint32_t itag = kInternalTagBase | 0x40000000u | static_cast<uint32_t>(tag);
  if (Status st = agree_by_messages(group->world, comm->p2p_ctx, itag, &ctx); !st) return raise_status(comm, st);
  *newcomm = comm_new_intra(comm, group->world, ctx);
  return *newcomm ? MPI_SUCCESS : raise(comm, MPI_ERR_INTERN, "could not make the communicator");
}

TOROID_MPI_API(int, Comm_free, (MPI_Comm * comm)) {
  MPI_ENTER("MPI_Comm_free");
  if (!comm) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "comm is NULL");
  if (int e = check_comm(*comm)) return e;
  MPI_Comm c = *comm;
  if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
    return raise(c, MPI_ERR_COMM, "%s cannot be freed", comm_label(c).c_str());
  if (int e = attrs_delete_comm(c)) return e;
  // Operations still queued on it finish first (MPI lets a program free a
  // communicator with non-blocking collectives in flight).
  if (c->queue_head) {
    Status st = rt().wait([&] { return c->queue_head == nullptr; }, "MPI_Comm_free: its pending collectives");
    if (!st) return raise_status(c, st);
  }
  // Requests still naming it (a pending receive, a persistent request)
  // keep it until the last one is recycled.
  c->user_freed = true;
  if (c->requests == 0) comm_destroy(c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_set_info, (MPI_Comm comm, MPI_Info info)) {
  MPI_ENTER("MPI_Comm_set_info");
  if (int e = check_comm(comm)) return e;
  if (int e = check_info(info)) return e;
  for (const auto& [k, v] : info->kv) {
    if (k == "toroid_repro") {
      auto r = parse_repro(v);
      if (!r) return raise(comm, MPI_ERR_INFO_VALUE, "toroid_repro '%s': %s", v.c_str(), r.status().message().c_str());
      comm->repro = *r;
    }
    bool replaced = false;
    for (auto& h : comm->hints)
      if (h.first == k) {
        h.second = v;
        replaced = true;
      }
    if (!replaced) comm->hints.emplace_back(k, v);
  }
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used)) {
  MPI_ENTER("MPI_Comm_get_info");
  if (int e = check_comm(comm)) return e;
  if (!info_used) return raise(comm, MPI_ERR_ARG, "info_used is NULL");
  if (int e = PMPI_Info_create(info_used)) return e;
  for (const auto& [k, v] : comm->hints) (void)PMPI_Info_set(*info_used, k.c_str(), v.c_str());
  return MPI_SUCCESS;
}

