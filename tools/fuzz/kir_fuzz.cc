// libFuzzer target: every input that parses and verifies must round-trip.
//
//   parse -> verify -> print -> parse -> verify -> StructurallyEqual -> print
//
// The input's `// run:` directives are parsed too, and checked against the
// module when it verifies (kir-run's CPU side), for crashes only.
//
// Inputs that fail to parse or verify are fine (that is the diagnostics'
// job); a crash, a sanitizer report, or a broken round trip aborts, which
// libFuzzer records as a crashing input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "analysis/verifier.h"
#include "ir/equal.h"
#include "parser/parser.h"
#include "printer/kir_printer.h"
#include "tools/fuzz/fail.h"
#include "tools/kir-run/binding.h"
#include "tools/kir-run/directive.h"

namespace kir {
namespace {

[[noreturn]] void Fail(absl::string_view what, absl::string_view why,
                       absl::string_view text) {
  FuzzFail("kir_fuzz", what, why, text);
}

void CheckRoundTrip(absl::string_view text) {
  auto source = std::make_shared<SourceFile>();
  source->name = "input.kir";
  source->text = std::string(text);
  auto directives = ParseRunDirectives(source);
  auto first = ParseModuleString(text, "input.kir");
  if (!first.ok() || !Verify(**first).ok()) return;
  if (directives.ok()) {
    for (const RunDirective& directive : *directives) {
      (void)ValidateDirective(directive, **first);
    }
  }

  // Provenance is part of the structure, so print it to round-trip it.
  PrintOptions options;
  options.provenance = true;
  const std::string printed = PrintModule(**first, options);
  auto second = ParseModuleString(printed, "printed.kir");
  if (!second.ok()) {
    Fail("the printed module does not parse", second.status().message(),
         printed);
  }
  if (absl::Status status = Verify(**second); !status.ok()) {
    Fail("the printed module does not verify", status.message(), printed);
  }
  std::string why;
  if (!StructurallyEqual(**first, **second, &why)) {
    Fail("the reparsed module differs from the original", why, printed);
  }
  const std::string reprinted = PrintModule(**second, options);
  if (reprinted != printed) {
    Fail("printing the reparsed module gives different text",
         "the first print, then the second:", printed + "\n---\n" + reprinted);
  }
}

}  // namespace
}  // namespace kir

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kir::CheckRoundTrip(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
