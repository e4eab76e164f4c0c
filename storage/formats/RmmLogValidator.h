#pragma once
// Consistency of an RMM log as an allocation history, checked before anything replays it:
// - an allocate at an address that is still live, or overlapping a live allocation;
// - an allocate that returned the null pointer;
// - a free of a pointer that is not live (never allocated, or already freed);
// - a free whose size differs from its allocate's size.
// "allocate failure" records change nothing. The first problem is thrown as a FormatError
// located "line N", naming the earlier line involved where there is one.
#include "storage/formats/RmmLog.h"

namespace allocscope::formats {

class RmmLogValidator {
public:
    static void check(const RmmLog& log);
};

}  // namespace allocscope::formats
