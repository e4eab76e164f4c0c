#include "storage/session/SessionError.h"

namespace allocscope::storage {

SessionError::SessionError(std::string what, std::string where)
    : std::runtime_error(what + " (" + where + ")"), problem_(std::move(what)), where_(std::move(where)) {}

}  // namespace allocscope::storage
