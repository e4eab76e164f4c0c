#pragma once
// Search by frame: which of a run's stacks have a frame whose text ("name (file:line)", as the
// views show it) contains a piece of text, case-insensitive. One pass over the session's frame
// table and the run's stacks; the views then highlight the blocks whose stack id is in the set.
#include <cstdint>
#include <set>
#include <string>

#include "storage/session/SessionReader.h"

namespace allocscope::storage {

class StackSearch {
public:
    static std::set<std::uint32_t> matching(SessionReader& reader, int run, const std::string& text);
};

}  // namespace allocscope::storage
