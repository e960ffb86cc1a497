// The pass fuzzer's mutations of inputs that verify: a token in the text,
// or one IR-level change. Each keeps the input parsing, and most keep it
// verifying, so that the fuzzer's time goes to the passes, not the parser.
#ifndef KIR_TOOLS_FUZZ_MUTATE_H_
#define KIR_TOOLS_FUZZ_MUTATE_H_

#include <random>
#include <string>

#include "ir/ir.h"

namespace kir {

// Replaces an integer literal of `text` by an interesting one (a boundary,
// a neighbour of the old value), or a value name by another of the input;
// false if there is none.
bool MutateToken(std::string& text, std::mt19937_64& random);

// One IR-level change to a random op of `module`: an attribute or constant
// into an interesting value, an operand into another visible value of its
// type, two independent neighbouring ops swapped, or an op without regions
// that nothing uses (no op, no parameter) removed. False if the change
// drawn does not apply; `module` is then unchanged. The module stays
// printable: no use of a removed value is left behind.
bool MutateIr(Module& module, std::mt19937_64& random);

}  // namespace kir

#endif  // KIR_TOOLS_FUZZ_MUTATE_H_
