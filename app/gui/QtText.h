#pragma once
// The domain layers speak UTF-8 std::string; the views speak QString. One conversion for every
// adapter in app/gui, so no two files define their own (a unity batch would see both).

#include <QString>

#include <string_view>

namespace allocscope::app {

inline QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace allocscope::app
