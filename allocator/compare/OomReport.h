#pragma once
// An OomAnswer as `allocscope-cli oom` prints it: a text report whose first line answers the seed
// question, or one JSON object with the same content (the app's view draws the struct itself).
#include <string>

#include "allocator/compare/OomAnswer.h"

namespace allocscope::alloc {

class OomReport {
public:
    static std::string text(const OomAnswer& answer);
    static std::string json(const OomAnswer& answer);
};

}  // namespace allocscope::alloc
