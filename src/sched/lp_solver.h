// Linear programs and the solvers behind them: a LinearProgram is built column by column
// (each variable with its bounds, objective coefficient and row entries), and an LpSolver
// returns a status and the variable values. ClpLpSolver (COIN-OR CLP) is the one shipped; any
// other solver fits behind the same interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetsched::sched {

inline constexpr double kLpInfinity = 1e30;  // CLP's (and most solvers') "no bound"

// A linear program in column-major (CSC) form, built incrementally. Not thread-safe.
class LinearProgram {
 public:
  enum class Sense { kMinimize, kMaximize };
  struct Entry {
    int32_t row;
    double coef;
  };

  explicit LinearProgram(Sense sense = Sense::kMaximize) : sense_(sense) {}

  // Adds a row lower <= sum coef * x <= upper (use +-kLpInfinity for no bound); returns its index.
  int32_t AddRow(double lower, double upper);
  // Adds a variable lower <= x <= upper with objective coefficient `objective` and the given
  // entries in existing rows; returns its index. Complexity O(entries).
  int32_t AddVariable(double lower, double upper, double objective,
                      const std::vector<Entry>& entries);
  // The same with the entries passed as two parallel arrays of `count` items (no allocation).
  int32_t AddVariable(double lower, double upper, double objective, const int32_t* rows,
                      const double* coefs, int32_t count);
  void Reserve(int32_t variables, int32_t entries);

  Sense sense() const { return sense_; }
  int32_t variables() const { return static_cast<int32_t>(col_lower_.size()); }
  int32_t rows() const { return static_cast<int32_t>(row_lower_.size()); }
  int64_t entries() const { return static_cast<int64_t>(index_.size()); }

  // Raw CSC arrays for solvers: column j's entries are [start[j], start[j+1]).
  const std::vector<int64_t>& start() const { return start_; }
  const std::vector<int32_t>& index() const { return index_; }
  const std::vector<double>& value() const { return value_; }
  const std::vector<double>& col_lower() const { return col_lower_; }
  const std::vector<double>& col_upper() const { return col_upper_; }
  const std::vector<double>& objective() const { return objective_; }
  const std::vector<double>& row_lower() const { return row_lower_; }
  const std::vector<double>& row_upper() const { return row_upper_; }

  // Objective value and largest bound or row violation of `x` (for checks and tests).
  double ObjectiveOf(const std::vector<double>& x) const;
  double MaxViolation(const std::vector<double>& x) const;

 private:
  Sense sense_;
  std::vector<int64_t> start_ = {0};
  std::vector<int32_t> index_;
  std::vector<double> value_;
  std::vector<double> col_lower_, col_upper_, objective_;
  std::vector<double> row_lower_, row_upper_;
};

enum class LpStatus { kOptimal, kInfeasible, kUnbounded, kLimit, kError };
std::string_view LpStatusName(LpStatus status);  // "optimal", "infeasible", ...

struct LpSolution {
  LpStatus status = LpStatus::kError;
  std::vector<double> values;  // one per variable; meaningful when status is kOptimal
  double objective = 0;
  std::string message;  // solver's detail when not optimal
};

struct LpOptions {
  // Wall-clock limit of one solve; past it the status is kLimit (a caller never stalls on a
  // solver). 0: none.
  double max_seconds = 10;
  // Simplex variant. kPrimal suits the allocation LPs (x = 0 is feasible, so primal starts
  // from a feasible slack basis); kAuto lets the solver choose (CLP: presolve, then dual or
  // primal by its own rules).
  enum class Method { kPrimal, kDual, kAuto };
  Method method = Method::kPrimal;
};

// Solves linear programs. Implementations are stateless between calls (each Solve starts
// from scratch) and need not be thread-safe.
class LpSolver {
 public:
  virtual ~LpSolver() = default;
  virtual std::string_view name() const = 0;
  virtual LpSolution Solve(const LinearProgram& lp, const LpOptions& options) = 0;
};

// COIN-OR CLP's simplex, from a slack basis, the variant LpOptions::method names.
std::unique_ptr<LpSolver> MakeClpSolver();

}  // namespace hetsched::sched
