#pragma once
// Typed parameters of a demo workload: what a workload declares (ParamSpec), the values a run
// uses (WorkloadParams), and the parsing of `--param k=v` overrides with errors that say what is
// wrong and where.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "allocator/workloads/WorkloadError.h"

namespace allocscope::alloc {

enum class ParamType : std::uint8_t { Int, Double, Bool, Choice };
const char* paramTypeName(ParamType type);  // "int", "double", "bool", "choice"

struct ParamSpec {
    std::string name;
    ParamType type = ParamType::Int;
    std::string defaultValue;          // as text, parsed like an override
    double min = 0.0;                  // Int / Double: inclusive bounds
    double max = 0.0;
    std::vector<std::string> choices;  // Choice: the accepted values
    std::string help;                  // one line

    static ParamSpec integer(std::string name, std::int64_t def, std::int64_t min, std::int64_t max, std::string help);
    static ParamSpec real(std::string name, double def, double min, double max, std::string help);
    static ParamSpec boolean(std::string name, bool def, std::string help);
    static ParamSpec choice(std::string name, std::string def, std::vector<std::string> choices, std::string help);
};

struct ParamValue {
    ParamType type = ParamType::Int;
    std::int64_t i = 0;
    double d = 0.0;
    bool b = false;
    std::string s;  // Choice value; for every type also the canonical text
};

// The resolved values of every declared parameter (defaults + overrides).
class WorkloadParams {
public:
    // Defaults of `specs`, then each override "name=value" in order. Throws WorkloadError on an
    // unknown name (with the nearest known name), an unparsable or out-of-range value.
    static WorkloadParams resolve(const std::vector<ParamSpec>& specs,
                                  const std::vector<std::pair<std::string, std::string>>& overrides = {});
    // Splits "k=v" (for --param). Throws WorkloadError when there is no '='.
    static std::pair<std::string, std::string> splitAssignment(const std::string& text);

    std::int64_t getInt(const std::string& name) const;
    double getDouble(const std::string& name) const;
    bool getBool(const std::string& name) const;
    const std::string& getChoice(const std::string& name) const;
    const std::map<std::string, ParamValue>& values() const { return values_; }
    // "k=v,k=v" in name order: a stable description of a run's parameters.
    std::string text() const;

private:
    const ParamValue& at(const std::string& name, ParamType type) const;
    std::map<std::string, ParamValue> values_;
};

// Parses `text` as a value of `spec` (bounds checked). Throws WorkloadError.
ParamValue parseParamValue(const ParamSpec& spec, const std::string& text);

}  // namespace allocscope::alloc
