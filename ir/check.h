// Internal invariant checks. A failed check is a compiler bug, never a user
// error: user errors are located diagnostics returned as absl::Status.
#ifndef KIR_IR_CHECK_H_
#define KIR_IR_CHECK_H_

#include <sstream>
#include <string>

namespace kir::internal {

// Collects a message and aborts when destroyed.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  CheckFailure& self() { return *this; }
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `KIR_CHECK(c) << ...` be an expression of type void.
struct Voidify {
  void operator&(CheckFailure&) {}
};

}  // namespace kir::internal

#define KIR_CHECK(condition)                  \
  (condition) ? (void)0                       \
              : ::kir::internal::Voidify() &  \
                    ::kir::internal::CheckFailure(__FILE__, __LINE__, #condition).self()

#define KIR_UNREACHABLE() \
  KIR_CHECK(false) << "unreachable "

#endif  // KIR_IR_CHECK_H_
