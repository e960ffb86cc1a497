// What tests need to know about a sanitizer build (KIR_SANITIZE=ON):
// everything runs about ten times slower there, so randomized tests do
// fewer rounds, still enough to reach every kind of case under the
// sanitizers while the Release build runs them all.
#ifndef KIR_IR_SANITIZERS_H_
#define KIR_IR_SANITIZERS_H_

namespace kir {

#ifdef KIR_SANITIZE
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// How much longer a timed test may take under the sanitizers.
inline constexpr double kSanitizerSlowdown = kSanitizedBuild ? 10.0 : 1.0;

// `rounds` of a randomized test, a tenth of them (at least 1) under the
// sanitizers.
inline constexpr int SanitizerScaled(int rounds) {
  return kSanitizedBuild ? (rounds >= 10 ? rounds / 10 : 1) : rounds;
}

}  // namespace kir

#endif  // KIR_IR_SANITIZERS_H_
