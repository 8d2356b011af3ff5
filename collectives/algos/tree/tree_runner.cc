#include "collectives/algos/tree/tree_runner.h"

#include <cstdio>

#include "collectives/comm.h"
#include "netstack/tree/combine.h"

namespace toroid {

using schedule::TreeMethod;

Status TreeRunner::start(CombineEngine* engine, uint8_t cls, uint32_t tag, const schedule::TreeCodec& codec,
                         const void* in, void* out, const char* what) {
  engine_ = engine;
  cls_ = cls;
  codec_ = codec;
  out_ = out;
  what_ = what;
  done_ = false;
  status_ = Status::ok();
  if (!engine_) return error(Code::kUnsupported, "%s: no combine network spans this communicator", what_);
  if (codec_.count > 0 && (!in || !out)) return error(Code::kInvalid, "%s: null buffer", what_);
  Status st;
  if (codec_.method == TreeMethod::kFloatSum) {
    const auto n = static_cast<uint32_t>(codec_.count);
    if (codec_.dtype == DType::kDouble) {
      st = fsum_d_.start(engine_, cls_, tag, static_cast<const double*>(in), static_cast<double*>(out), n,
                         codec_.nodes);
    } else {
      st = fsum_f_.start(engine_, cls_, tag, static_cast<const float*>(in), static_cast<float*>(out), n, codec_.nodes);
    }
  } else if (codec_.direct()) {
    const arith::TreePass& p = codec_.pass;
    st = engine_->start(cls_, p.op, p.type, p.width, in, out, p.operands, CombineEngine::op_id(tag, 0));
  } else {
    const arith::TreePass& p = codec_.pass;
    ops_.resize(p.bytes());
    st = schedule::tree_encode(codec_, in, ops_.data());
    if (st) st = engine_->start(cls_, p.op, p.type, p.width, ops_.data(), ops_.data(), p.operands, CombineEngine::op_id(tag, 0));
  }
  if (!st) {
    done_ = true;
    return error(st.code(), "%s: %s", what_, st.message().c_str());
  }
  progress();
  return Status::ok();
}

void TreeRunner::finish(Status st) {
  if (!st) st = error(st.code(), "%s: %s", what_, st.message().c_str());
  status_ = std::move(st);
  done_ = true;
}

bool TreeRunner::progress() {
  if (done_) return false;
  if (codec_.method == TreeMethod::kFloatSum) {
    const bool dbl = codec_.dtype == DType::kDouble;
    const bool moved = dbl ? fsum_d_.progress() : fsum_f_.progress();
    if (dbl ? fsum_d_.done() : fsum_f_.done()) finish(dbl ? fsum_d_.status() : fsum_f_.status());
    return moved;
  }
  Status st;
  if (!engine_->test(cls_, &st)) return false;
  if (st && !codec_.direct()) schedule::tree_decode(codec_, ops_.data(), out_);
  finish(std::move(st));
  return true;
}

std::string TreeRunner::waiting_for() const {
  char buf[160];
  const arith::TreePass& p = codec_.pass;
  if (codec_.method == TreeMethod::kFloatSum) {
    snprintf(buf, sizeof buf, "the combine network (class %u): the exact float sum's passes over %llu values", cls_,
             static_cast<unsigned long long>(codec_.count));
  } else {
    snprintf(buf, sizeof buf, "the combine network (class %u): %s %s, %u operands of %u bytes", cls_,
             alu_op_name(p.op), p.type == AluType::kSigned ? "signed" : "unsigned", p.operands, p.width);
  }
  return buf;
}

void TreeRunner::abort() {
  if (done_) return;
  if (engine_) engine_->cancel(cls_, error(Code::kAborted, "%s: abandoned by its communicator", what_));
  done_ = true;
}

bool TreeAlgo::progress() {
  if (done_) return false;
  const bool moved = run_.progress();
  if (run_.done()) finish(run_.status());
  return moved;
}

Status TreeAlgo::launch(Comm& comm, const schedule::TreeCodec& codec, const void* in, void* out, const char* what) {
  Status st = run_.start(comm.tree(), comm.tree_class(), comm.tag(), codec, in, out, what);
  if (!st) return st;
  if (run_.done()) finish(run_.status());
  return Status::ok();
}

const char* tree_missing(const CommInfo& comm) {
  return comm.has_tree ? nullptr : "needs the combine network (no tree class spans this communicator)";
}

}  // namespace toroid
