#include "storage/session/ByteCodec.h"

#include "storage/session/SessionError.h"

namespace allocscope::storage {

void ByteReader::damaged() const {
    throw SessionError(std::string("the session file is damaged: a ") + what_ + " is truncated or malformed", "session data");
}

}  // namespace allocscope::storage
