// The device runtime of emitted CUDA: one `__device__ __forceinline__`
// function per PTX primitive, generated on demand so that a translation unit
// holds only the primitives its kernels call.
//
// Every function that fences, waits, issues a copy, touches an mbarrier or
// accesses memory has a "memory" clobber (hopper-ptx.md R12). Single-issue
// primitives also come in a predicated variant, `<name>_if(issue, ...)`,
// that executes the instruction under `@p` inside the asm (p = issue != 0)
// rather than behind a C++ branch (hopper-ptx.md 5.4). Measured with ptxas
// 13.0 on an H100: a TMA store issued this way under an elect.sync
// predicate still sits in a BSSY/BSYNC region in SASS, as it does when the
// predicate comes from an elect.sync inside the same asm.
//
// Used by the emitter only; the strings are pinned by testdata/cuda goldens.
#ifndef KIR_PRINTER_CUDA_RUNTIME_H_
#define KIR_PRINTER_CUDA_RUNTIME_H_

#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/types.h"

namespace kir {

// The text every emitted translation unit starts with: fixed-width types,
// 16-bit float storage types, kir_vec, kir_tensor_map (the driver's
// CUtensorMap, checked against cuda.h when compiled by nvcc) and the dynamic
// shared memory window.
std::string CudaPrelude();

// Collects the definitions a translation unit needs, in first-use order.
// Each method registers its function (and those it calls) and returns the
// name to call.
class CudaRuntime {
 public:
  // All definitions, in registration order.
  std::string Text() const;

  // Addressing.
  std::string SmemAddress();  // kir_u32 (const void*): shared window address
  std::string Swizzle();      // template <int S> kir_i32 (kir_i32 byte_offset)
  std::string FloorDiv();     // floor division and modulo of index expressions
  std::string FloorMod();
  std::string CeilDiv();

  // 16-bit floats (dtype kF16 or kBF16).
  std::string ToF32(DType half);                   // exact widening
  std::string FromF32(DType half);                 // round to nearest even
  std::string FromInt(DType half, DType integer);  // i32 or i64 source, RNE
  // add sub mul fma min max (PTX instructions); div rem exp sqrt (through
  // f32, which rounds once more to the exact-enough f32 result: f32 has at
  // least 2p+2 bits for both 16-bit formats, so the double rounding is
  // innocuous); neg abs (sign bit).
  std::string HalfOp(absl::string_view op, DType half);
  std::string Pack2();    // template <class H> kir_u32 (H lo, H hi)
  std::string Unpack2();  // template <class H> H kir_unpack_lo/hi(kir_u32)

  // Threads.
  std::string ElectSync();                      // bool ()
  std::string Shuffle(absl::string_view mode);  // kir_u32 (kir_u32, kir_u32)
  std::string ClusterCtaId(absl::string_view dim);  // kir_u32 ()
  std::string ClusterCtaRank();                     // kir_u32 ()
  std::string SetMaxNReg(bool increase);            // template <int R> void ()

  // Barriers and fences. Fences have a predicated variant.
  std::string BarrierBlock();               // void ()
  std::string BarrierNamed(bool arrive);    // template <int ID, int N> void ()
  std::string ClusterArrive(bool relaxed);  // void ()
  std::string ClusterWait();                // void ()
  std::string FenceProxyAsync(absl::string_view space, bool predicated);
  std::string FenceAcqRel(absl::string_view scope, bool predicated);
  std::string FenceMbarrierInit(bool predicated);
  // bar.red: template <int ID, int N> bool (bool vote) for `or` and `and`,
  // kir_u32 (bool vote) for `popc`.
  std::string BarrierReduce(absl::string_view op);

  // mbarriers (addresses are shared-window addresses).
  std::string MbarrierInit(bool predicated);      // template <int COUNT> (addr)
  std::string MbarrierArrive(bool predicated);    // (addr)
  std::string MbarrierArriveTx(bool predicated);  // template <int BYTES> (addr)
  // The barrier at `addr`'s offset in the cluster's CTA of rank `cta`
  // (mapa), release at cluster scope.
  std::string MbarrierArriveRemote(absl::string_view scope,
                                   bool predicated);  // (addr, kir_u32 cta)
  // st.async of `lanes` 32-bit values (`ptx_type` b32 / f32 / s32 / u32)
  // into a peer CTA's shared memory: (dst, bar, kir_u32 cta, lanes...).
  std::string StoreRemote(int lanes, absl::string_view ptx_type);
  // (addr, parity): a try_wait loop, run by every lane that reaches it (never
  // predicated: a predicated loop breaks the code ptxas makes around it).
  // scope: "cta" or "cluster" (the acquire's).
  std::string MbarrierWait(absl::string_view scope);
  std::string MbarrierInval(bool predicated);  // (addr)

  // cp.async (Ampere): `.ca` for 4 and 8 bytes, `.cg` for 16.
  std::string CpAsync(int bytes,
                      bool predicated);  // (kir_u32 dst, const void* src)
  std::string CpAsyncCommit(bool predicated);
  std::string CpAsyncWait(bool predicated);  // template <int N>

  // TMA and bulk copies; coordinates are innermost first.
  std::string TmaLoad(int rank, bool multicast, bool predicated);
  std::string TmaStore(int rank, bool predicated);
  std::string TmaReduce(absl::string_view op, int rank, bool predicated);
  std::string TmaPrefetch(bool predicated);
  std::string BulkLoad(bool predicated);   // template <int BYTES>
  std::string BulkStore(bool predicated);  // template <int BYTES>
  std::string BulkCommit(bool predicated);
  std::string BulkWait(bool read, bool predicated);  // template <int N>

  // wgmma. `dtype` is the A/B type (kBF16 or kF16), `accumulator` kF32 or
  // kF16; `a_in_registers` selects the RS form.
  std::string WgmmaFence();
  std::string WgmmaCommit();
  std::string WgmmaWait();        // template <int N>
  std::string WgmmaDescriptor();  // kir_u64 (addr, lbo, sbo, layout)
  std::string Wgmma(int n, DType dtype, DType accumulator, bool a_in_registers);
  // Keeps the compiler from moving register accesses across a wgmma wait.
  std::string FenceOperands();  // template <class T, int N> void (T (&)[N])
  // kir_packed_get / kir_packed_set: 16-bit elements of b32 words.
  std::string PackedHalves();

  // ldmatrix / stmatrix of `count` 8x8 matrices of b16.
  std::string Ldmatrix(int count, bool trans);
  std::string Stmatrix(int count, bool trans);

  // Semaphores (global i32).
  // A spin loop, never predicated (as MbarrierWait).
  std::string SemWait(absl::string_view scope);
  std::string SemRelease(absl::string_view scope, bool predicated);
  // atom / red. `space` is kGlobal or kShared; `order` and `scope` as in PTX.
  std::string Atomic(absl::string_view op, DType dtype, MemorySpace space,
                     absl::string_view order, absl::string_view scope);
  std::string Reduce(absl::string_view op, DType dtype, MemorySpace space,
                     absl::string_view order, absl::string_view scope,
                     bool predicated);

 private:
  // Registers `definition` under `name` unless present; returns `name`.
  std::string Define(const std::string& name, const std::string& definition);
  bool Has(const std::string& name) const { return names_.count(name) > 0; }

  std::vector<std::string> definitions_;
  std::set<std::string> names_;
};

}  // namespace kir

#endif  // KIR_PRINTER_CUDA_RUNTIME_H_
