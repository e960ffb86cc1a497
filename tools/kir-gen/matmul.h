// Generates Hopper GEMMs as plain (unlowered) kir: a persistent loop over
// output tiles around a k loop of TMA loads feeding wgmma, marked for
// circular buffering, and an epilogue; no barriers, fences, elections,
// stages or roles (the default pipeline adds them). Each kernel carries
// `// run:` directives that check it against cuBLASLt.
//
// Layout names: an operand's major is the dimension that is contiguous in
// memory. A is M x K, B is N x K (as cuBLAS's "TN": C = A @ B^T when both
// are K-major); a_major = k | m, b_major = k | n.
#ifndef KIR_TOOLS_KIR_GEN_MATMUL_H_
#define KIR_TOOLS_KIR_GEN_MATMUL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kir::gen {

// The H100's SM count: the persistent grid's size, and what the heuristic
// fills.
constexpr int kSmCount = 132;
// A block's shared memory (227 KiB).
constexpr int64_t kSharedMemoryBytes = 232448;
// The generated kernel's name; its parameters are %a, %b, %c (and their
// tensor maps), its sizes %M, %N, %K.
constexpr char kKernelName[] = "matmul";

enum class OperandMajor { kK, kMN };  // K-contiguous, or M/N-contiguous
enum class ElementType { kBF16, kF16, kF32 };
enum class EpilogueMode { kAuto, kReuseMainloop, kDedicated };
enum class SplitKMode { kSerial, kTmaSerial, kTmaAtomic, kCluster, kGather };

struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  OperandMajor a_major = OperandMajor::kK;
  OperandMajor b_major = OperandMajor::kK;
  ElementType dtype = ElementType::kBF16;      // A and B
  ElementType out_dtype = ElementType::kBF16;  // C
};

// Every choice the heuristic makes; each can also be set by hand.
struct MatmulConfig {
  int tile_m = 128, tile_n = 256, tile_k = 64;
  int stages = 4;
  int consumer_warpgroups = 2;
  bool pingpong = false;
  int cluster_m = 1, cluster_n = 1;  // TMA multicast across the cluster
  int raster_group = 8;              // grouped rasterization (tiles in M)
  int split_k = 1;                   // > 1: a `splitk` over grid dim z
  SplitKMode split_k_mode = SplitKMode::kSerial;
  // > 0: split z runs this many k-steps more than split z-1, so that the
  // splits finish one after the other in the order the turn modes (serial,
  // tma-serial) serve them, and each turn hides behind the next split's
  // longer mainloop instead of adding to the critical path.
  int split_k_skew = 0;
  EpilogueMode epilogue = EpilogueMode::kAuto;
  std::string circular_buffer = "warp_specialized";  // or "pipelined"
};

// "bf16", "f16", "f32" and back.
const char* ElementTypeName(ElementType type);
absl::StatusOr<ElementType> ParseElementType(absl::string_view text);
// "serial", "tma-serial", "tma-atomic", "cluster", "gather"; "auto",
// "reuse", "dedicated".
absl::StatusOr<SplitKMode> ParseSplitKMode(absl::string_view text);
absl::StatusOr<EpilogueMode> ParseEpilogueMode(absl::string_view text);
// An operand's major as its letter: 'k', or 'm' for A and 'n' for B
// (`operand` is 'a' or 'b'), and back.
const char* OperandMajorName(OperandMajor major, char operand);
absl::StatusOr<OperandMajor> ParseOperandMajor(absl::string_view text,
                                               char operand);

// The shared memory the generated kernel needs after the passes (stages,
// output tile, rings), in bytes, rounded up to cover alignment padding.
int64_t SharedMemoryBytes(const MatmulProblem& problem,
                          const MatmulConfig& config);

// The most stages, at most 8, with which `config` fits in shared memory
// (0 when not even one does).
int MaxStages(const MatmulProblem& problem, const MatmulConfig& config);

// The pipeline that lowers a kernel of `config`: "default", or with a TMA
// split-K mode "serialize-split-k{mode=tma-atomic},default" (the splitk is
// lowered first; the default pipeline's serialize-split-k then finds none).
std::string LoweringPipeline(const MatmulConfig& config);

// The check of a `// run:` directive for `problem`, e.g.
// "c ~= bf16(a @ b.T) rtol=0.01 atol=0.064" (tolerance scaled with K),
// and a whole directive binding the problem's sizes and inputs, lowered by
// LoweringPipeline(config).
std::string ReferenceCheck(const MatmulProblem& problem);
std::string RunDirective(const MatmulProblem& problem,
                         const MatmulConfig& config = MatmulConfig());

// Checks that the problem and configuration can be generated (sizes >= 1,
// a tile wgmma can compute, stages that fit in shared memory, a shape TMA
// can describe); a clear error names what is wrong.
absl::Status ValidateMatmul(const MatmulProblem& problem,
                            const MatmulConfig& config);

// The skew (MatmulConfig::split_k_skew) the heuristic gives `config`'s
// splits: 0 unless K is split in a turn mode (serial, tma-serial); else
// 512 / tile_n k-steps (a turn is worth about 8 k-steps of a 128x64 tile),
// smaller where the skew would take more than half of K's k-steps.
int ChooseSplitSkew(const MatmulProblem& problem, const MatmulConfig& config);

// The heuristic's configuration for `problem`; `explanation`, when not
// null, receives one line per choice saying why. Where K is split, it is
// split in `split_k_mode`: the tile is chosen as for the turn modes, and
// for tma-atomic, whose partials reduce without taking turns, the split
// count with that reduction's cost.
MatmulConfig ChooseConfig(const MatmulProblem& problem,
                          std::string* explanation = nullptr,
                          SplitKMode split_k_mode = SplitKMode::kSerial);

// The kernel as .kir text with its `// run:` directives.
absl::StatusOr<std::string> GenerateMatmul(const MatmulProblem& problem,
                                           const MatmulConfig& config);

// Short, stable text naming a configuration, e.g.
// "128x256x64 s4 ws coop wg2 c1x1 r8 epi=dedicated" (with " splitk=4/serial"
// when K is split, and " skew=3" when the splits are skewed), and its parser
// (the tuning cache stores this text). The parser takes the settings in any
// order; those left out keep their defaults, so "128x256x64 s4 ws coop c1x1
// epi=reuse" parses too.
std::string DescribeConfig(const MatmulConfig& config);
absl::StatusOr<MatmulConfig> ParseConfig(absl::string_view text);

}  // namespace kir::gen

#endif  // KIR_TOOLS_KIR_GEN_MATMUL_H_
