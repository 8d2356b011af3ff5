// Info objects (MPI 3.1 chapter 9): ordered (key, value) strings. Keys this
// library reads: toroid_repro (MPI_Comm_set_info: exact | fixed-order | none).
// As MPI 4.0 allows (11.4.1), every MPI_Info call works before MPI_Init and
// after MPI_Finalize; MPI_Info_get_string and MPI_Info_create_env are MPI
// 4.0's.
#include <unistd.h>

#include <cstring>
#include <string>

#include "mpi/impl.h"

toroid_mpi_info toroid_mpi_info_env;

const std::string* toroid_mpi_info::find(const std::string& key) const {
  for (const auto& kv : this->kv)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

namespace toroid::mpi {
namespace {
struct InfoEnv {
  InfoEnv() {
    toroid_mpi_info_env.magic = kMagicInfo;
    toroid_mpi_info_env.predefined = true;
  }
} g_info_env;

int check_key(const char* key) {
  if (!key) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "the key is NULL");
  const size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "key '%.40s' is empty or longer than MPI_MAX_INFO_KEY (%d)", key,
                 MPI_MAX_INFO_KEY);
  return 0;
}
}  // namespace
}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Info_create, (MPI_Info * info)) {
  MPI_ENTER_ANYTIME("MPI_Info_create");
  if (!info) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "info is NULL");
  auto* i = new toroid_mpi_info();
  i->magic = kMagicInfo;
  *info = i;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_set, (MPI_Info info, const char* key, const char* value)) {
  MPI_ENTER_ANYTIME("MPI_Info_set");
  if (int e = check_info(info)) return e;
  if (info->predefined) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed");
  if (int e = check_key(key)) return e;
  if (!value || std::strlen(value) > MPI_MAX_INFO_VAL)
    return raise(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "the value of '%s' is NULL or longer than MPI_MAX_INFO_VAL", key);
  for (auto& kv : info->kv)
    if (kv.first == key) {
      kv.second = value;
      return MPI_SUCCESS;
    }
  info->kv.emplace_back(key, value);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_delete, (MPI_Info info, const char* key)) {
  MPI_ENTER_ANYTIME("MPI_Info_delete");
  if (int e = check_info(info)) return e;
  if (int e = check_key(key)) return e;
  for (size_t i = 0; i < info->kv.size(); ++i)
    if (info->kv[i].first == key) {
      info->kv.erase(info->kv.begin() + static_cast<ptrdiff_t>(i));
      return MPI_SUCCESS;
    }
  return raise(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, "no key '%s'", key);
}

TOROID_MPI_API(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag)) {
  MPI_ENTER_ANYTIME("MPI_Info_get");
  if (int e = check_info(info)) return e;
  if (int e = check_key(key)) return e;
  if (!flag || (valuelen > 0 && !value)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "value or flag is NULL");
  if (valuelen < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "valuelen %d is negative", valuelen);
  const std::string* v = info->find(key);
  *flag = v != nullptr;
  if (v) {
    const size_t n = std::min<size_t>(v->size(), static_cast<size_t>(valuelen));
    std::memcpy(value, v->data(), n);
    value[n] = 0;
  }
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag)) {
  MPI_ENTER_ANYTIME("MPI_Info_get_valuelen");
  if (int e = check_info(info)) return e;
  if (int e = check_key(key)) return e;
  if (!valuelen || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "valuelen or flag is NULL");
  const std::string* v = info->find(key);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_get_nkeys, (MPI_Info info, int* nkeys)) {
  MPI_ENTER_ANYTIME("MPI_Info_get_nkeys");
  if (int e = check_info(info)) return e;
  if (!nkeys) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "nkeys is NULL");
  *nkeys = static_cast<int>(info->kv.size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_get_nthkey, (MPI_Info info, int n, char* key)) {
  MPI_ENTER_ANYTIME("MPI_Info_get_nthkey");
  if (int e = check_info(info)) return e;
  if (!key) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "key is NULL");
  if (n < 0 || n >= static_cast<int>(info->kv.size()))
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "n %d is not below the number of keys (%zu)", n, info->kv.size());
  const std::string& k = info->kv[static_cast<size_t>(n)].first;
  std::memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_dup, (MPI_Info info, MPI_Info* newinfo)) {
  MPI_ENTER_ANYTIME("MPI_Info_dup");
  if (int e = check_info(info)) return e;
  if (!newinfo) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newinfo is NULL");
  auto* i = new toroid_mpi_info();
  i->magic = kMagicInfo;
  i->kv = info->kv;
  *newinfo = i;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Info_free, (MPI_Info * info)) {
  MPI_ENTER_ANYTIME("MPI_Info_free");
  if (!info) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "info is NULL");
  if (int e = check_info(*info)) return e;
  if ((*info)->predefined) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed");
  (*info)->magic = 0;
  (*info)->kv.clear();
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

// MPI 4.0 (10.2): the value and, in *buflen, the buffer it needs (its length
// plus the terminating null); a shorter buffer gets the value cut to
// *buflen - 1 characters, a zero-length one nothing.
TOROID_MPI_API(int, Info_get_string, (MPI_Info info, const char* key, int* buflen, char* value, int* flag)) {
  MPI_ENTER_ANYTIME("MPI_Info_get_string");
  if (int e = check_info(info)) return e;
  if (int e = check_key(key)) return e;
  if (!buflen || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "buflen or flag is NULL");
  if (*buflen < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "buflen %d is negative", *buflen);
  if (*buflen > 0 && !value) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "value is NULL");
  const std::string* v = info->find(key);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  if (*buflen > 0) {
    const size_t n = std::min<size_t>(v->size(), static_cast<size_t>(*buflen) - 1);
    std::memcpy(value, v->data(), n);
    value[n] = 0;
  }
  *buflen = static_cast<int>(v->size()) + 1;
  return MPI_SUCCESS;
}

// MPI 4.0 (11.2.2): what the process was started with, under the keys of
// MPI_Comm_spawn's info. Only what does not change with MPI_Init: the
// command, its arguments, the working directory and the highest thread level
// the library provides (MPI_Init_thread grants at most MPI_THREAD_FUNNELED);
// no key is guessed.
TOROID_MPI_API(int, Info_create_env, (int argc, char* argv[], MPI_Info* info)) {
  MPI_ENTER_ANYTIME("MPI_Info_create_env");
  if (!info) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "info is NULL");
  if (argc < 0 || (argc > 0 && !argv)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "argc %d without argv", argc);
  auto* i = new toroid_mpi_info();
  i->magic = kMagicInfo;
  if (argc > 0 && argv[0]) i->kv.emplace_back("command", argv[0]);
  std::string args;
  for (int k = 1; k < argc && argv[k]; ++k) {
    if (k > 1) args += ' ';
    args += argv[k];
  }
  if (argc > 1) i->kv.emplace_back("argv", args);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) i->kv.emplace_back("wdir", cwd);
  i->kv.emplace_back("thread_level", "MPI_THREAD_FUNNELED");
  *info = i;
  return MPI_SUCCESS;
}
