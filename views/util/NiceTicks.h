#pragma once
// "Nice" axis ticks (1, 2, 5 × 10^k steps) computed by hand, as openpilot's cabana does, so
// axes read 0, 2,000, 4,000 rather than 0, 1,837, 3,674.
#include <vector>

namespace allocscope::views {

struct NiceTicks {
    // The nice step for covering `span` with at most `maxTicks` intervals.
    static double step(double span, int maxTicks);
    // Tick values in [low, high], multiples of step(high - low, maxTicks).
    static std::vector<double> ticks(double low, double high, int maxTicks);
};

}  // namespace allocscope::views
