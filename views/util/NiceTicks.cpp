#include "views/util/NiceTicks.h"

#include <algorithm>
#include <cmath>

namespace allocscope::views {

double NiceTicks::step(double span, int maxTicks) {
    if (!(span > 0) || maxTicks < 1) return 1.0;
    const double raw = span / maxTicks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw) return m * magnitude;
    return 10.0 * magnitude;
}

std::vector<double> NiceTicks::ticks(double low, double high, int maxTicks) {
    std::vector<double> out;
    if (!(high > low)) return out;
    const double s = step(high - low, maxTicks);
    for (double v = std::ceil(low / s) * s; v <= high + s * 1e-9 && out.size() < 1000; v += s) out.push_back(v);
    return out;
}

}  // namespace allocscope::views
