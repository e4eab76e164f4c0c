#include "allocator/workloads/WorkloadParams.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace allocscope::alloc {

const char* paramTypeName(ParamType type) {
    switch (type) {
    case ParamType::Int: return "int";
    case ParamType::Double: return "double";
    case ParamType::Bool: return "bool";
    case ParamType::Choice: return "choice";
    }
    return "?";
}

namespace {

std::string formatNumber(double v) {
    std::ostringstream os;
    os.precision(15);
    os << v;
    return os.str();
}

// Edit distance, for "did you mean" on unknown parameter names.
std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t prev = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t keep = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
            prev = keep;
        }
    }
    return row[b.size()];
}

}  // namespace

ParamSpec ParamSpec::integer(std::string name, std::int64_t def, std::int64_t min, std::int64_t max, std::string help) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = ParamType::Int;
    s.defaultValue = std::to_string(def);
    s.min = static_cast<double>(min);
    s.max = static_cast<double>(max);
    s.help = std::move(help);
    return s;
}

ParamSpec ParamSpec::real(std::string name, double def, double min, double max, std::string help) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = ParamType::Double;
    s.defaultValue = formatNumber(def);
    s.min = min;
    s.max = max;
    s.help = std::move(help);
    return s;
}

ParamSpec ParamSpec::boolean(std::string name, bool def, std::string help) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = ParamType::Bool;
    s.defaultValue = def ? "true" : "false";
    s.help = std::move(help);
    return s;
}

ParamSpec ParamSpec::choice(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = ParamType::Choice;
    s.defaultValue = std::move(def);
    s.choices = std::move(choices);
    s.help = std::move(help);
    return s;
}

ParamValue parseParamValue(const ParamSpec& spec, const std::string& text) {
    const std::string where = spec.name + "=" + text;
    ParamValue v;
    v.type = spec.type;
    switch (spec.type) {
    case ParamType::Int: {
        errno = 0;
        char* end = nullptr;
        const long long parsed = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
            throw WorkloadError("parameter '" + spec.name + "' expects an integer, got '" + text + "'", where);
        }
        if (static_cast<double>(parsed) < spec.min || static_cast<double>(parsed) > spec.max) {
            throw WorkloadError("parameter '" + spec.name + "' must be between " + formatNumber(spec.min) +
                                    " and " + formatNumber(spec.max) + ", got " + text,
                                where);
        }
        v.i = parsed;
        v.d = static_cast<double>(parsed);
        v.s = std::to_string(parsed);
        return v;
    }
    case ParamType::Double: {
        errno = 0;
        char* end = nullptr;
        const double parsed = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(parsed)) {
            throw WorkloadError("parameter '" + spec.name + "' expects a number, got '" + text + "'", where);
        }
        if (parsed < spec.min || parsed > spec.max) {
            throw WorkloadError("parameter '" + spec.name + "' must be between " + formatNumber(spec.min) +
                                    " and " + formatNumber(spec.max) + ", got " + text,
                                where);
        }
        v.d = parsed;
        v.s = formatNumber(parsed);
        return v;
    }
    case ParamType::Bool:
        if (text == "true" || text == "1" || text == "True" || text == "yes") {
            v.b = true;
        } else if (text == "false" || text == "0" || text == "False" || text == "no") {
            v.b = false;
        } else {
            throw WorkloadError("parameter '" + spec.name + "' expects true or false, got '" + text + "'", where);
        }
        v.s = v.b ? "true" : "false";
        return v;
    case ParamType::Choice: {
        if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
            std::string list;
            for (const std::string& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
            throw WorkloadError("parameter '" + spec.name + "' must be one of " + list + ", got '" + text + "'", where);
        }
        v.s = text;
        return v;
    }
    }
    return v;
}

WorkloadParams WorkloadParams::resolve(const std::vector<ParamSpec>& specs,
                                       const std::vector<std::pair<std::string, std::string>>& overrides) {
    WorkloadParams params;
    for (const ParamSpec& spec : specs) params.values_[spec.name] = parseParamValue(spec, spec.defaultValue);
    for (const auto& [name, text] : overrides) {
        const auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == name; });
        if (it == specs.end()) {
            std::string best;
            std::size_t bestDistance = 4;  // suggest only close names
            for (const ParamSpec& s : specs) {
                const std::size_t d = distance(name, s.name);
                if (d < bestDistance) {
                    bestDistance = d;
                    best = s.name;
                }
            }
            std::string what = "unknown parameter '" + name + "'";
            if (!best.empty()) what += " (did you mean '" + best + "'?)";
            throw WorkloadError(what, name + "=" + text);
        }
        params.values_[name] = parseParamValue(*it, text);
    }
    return params;
}

std::pair<std::string, std::string> WorkloadParams::splitAssignment(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw WorkloadError("a parameter must be written name=value", text);
    }
    return {text.substr(0, eq), text.substr(eq + 1)};
}

const ParamValue& WorkloadParams::at(const std::string& name, ParamType type) const {
    const auto it = values_.find(name);
    // A generator asking for a parameter it did not declare is a programming error.
    if (it == values_.end() || it->second.type != type) {
        throw std::logic_error("workload parameter '" + name + "' is not declared as " + paramTypeName(type));
    }
    return it->second;
}

std::int64_t WorkloadParams::getInt(const std::string& name) const { return at(name, ParamType::Int).i; }
double WorkloadParams::getDouble(const std::string& name) const { return at(name, ParamType::Double).d; }
bool WorkloadParams::getBool(const std::string& name) const { return at(name, ParamType::Bool).b; }
const std::string& WorkloadParams::getChoice(const std::string& name) const { return at(name, ParamType::Choice).s; }

std::string WorkloadParams::text() const {
    std::string out;
    for (const auto& [name, value] : values_) out += (out.empty() ? "" : ",") + name + "=" + value.s;
    return out;
}

}  // namespace allocscope::alloc
