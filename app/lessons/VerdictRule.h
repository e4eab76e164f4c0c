#pragma once
// The small language of a lesson's verdict rules. A rule is data in the lesson file, parsed and
// checked when the lesson loads and evaluated over the numbers the runs measured; nothing about
// the outcome is stored. Examples:
//
//   peakReserved[B] < peakReserved[A] by >= 10%      B needs at least 10% less than A
//   oom[A] and not oom[B]
//   stat.num_alloc_retries[A] == stat.num_alloc_retries[B]
//   peakReserved[B] == peakReserved[A] within 2 MiB  equal up to a tolerance (also "within 1%")
//   configVerdict[written] == 'abort-at-import'
//   (peakReserved[A] - peakAllocated[A]) / peakReserved[A] > 0.1
//
// Values: METRIC[RUN] (LessonMetrics.h lists the metrics), numbers with an optional unit
// (B, KiB, MiB, GiB), 'text'. Operators, loosest first: or, and, not, comparisons (< <= > >= ==
// !=, with an optional `by >= Q` margin or `within Q` tolerance, Q a number with % or a unit),
// + -, * /, unary -. A bare number is true when it is not 0 (oom[A] is 1 or 0).
// `a < b by >= 10%` means a < b and (b - a) >= 10% of |b|; `a > b by >= 10%`: (a - b) >= 10% of |b|.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace allocscope::app {

struct MetricValue {
    bool isText = false;
    double number = 0.0;
    std::string text;
};

class VerdictRule {
public:
    // What the rule may name: `metricKind(name)` returns 'n' (number), 't' (text) or 0 (unknown);
    // `runs` are the lesson's run ids.
    struct Names {
        std::function<char(const std::string&)> metricKind;
        std::vector<std::string> runs;
    };
    // Parses and checks `text`. Throws LessonError("<what>", "<where>, column C").
    static VerdictRule parse(const std::string& text, const Names& names, const std::string& where);

    // Evaluates with the measured values. `value(metric, run)` may throw LessonError (e.g. the run
    // did not run because PyTorch refuses its config).
    using Lookup = std::function<MetricValue(const std::string& metric, const std::string& run)>;
    bool holds(const Lookup& value) const;

    // Every METRIC[RUN] the rule reads, in order of appearance (for showing the numbers).
    std::vector<std::pair<std::string, std::string>> references() const;
    const std::string& text() const { return text_; }

    struct Node;

private:
    std::string text_;
    std::shared_ptr<const Node> root_;
};

}  // namespace allocscope::app
