#pragma once
// Turns a PyTorch memory snapshot (pickle or its JSON form) into formats::Snapshot.
//
// Keys are read by presence, never by PyTorch version (reference §1.9): unknown keys are ignored
// and optional ones may be missing. A key of the wrong type is a FormatError whose location is
// the key path and the byte where the value starts, e.g.
//   "expected an int, found a str (device_traces[0][17].size, byte 5120)".
// Required keys: `action` of a trace entry, `address`/`total_size` of a segment, `size`/`state`
// of a block. A top level that is a bare list is read as the pre-2022 "list of segments" form.
//
// Values a replay needs make a file bad when they are wrong, at their byte: an address or size
// that is negative, a range [address, address + size) that runs past 2**64 (entry, segment,
// block), a segment device below -1 or beyond int64. Values that are only informative (a frame's
// line, time_us, an annotation's device) never do: one that does not fit int64 is read as
// unknown (Snapshot.h), e.g. TorchDynamo's 2**64-1 line.
#include <string>
#include <string_view>

#include "storage/formats/PyTree.h"
#include "storage/formats/Snapshot.h"
#include "storage/formats/SnapshotEntrySink.h"

namespace allocscope::formats {

class SnapshotReader {
public:
    enum class Encoding { Pickle, Json };

    // JSON when the first non-whitespace byte is '{' or '[' (a pickle never starts so: protocol
    // 2+ starts with PROTO 0x80); pickle otherwise, which rejects non-pickles clearly.
    static Encoding detect(std::string_view bytes);

    static Snapshot read(std::string_view bytes);
    // The first half of read(): the value tree of a pickle or JSON file, by detect(). A caller
    // that owns the bytes can free them before fromTree() to lower the peak memory of a big import.
    static PyTree parse(std::string_view bytes);
    static Snapshot readFile(const std::string& path);
    static Snapshot fromTree(const PyTree& tree);

    // Reads a snapshot pickle file in one pass through a bounded buffer, handing each trace entry
    // to `entries` as soon as it is read instead of keeping it (errors as read(); an entry's are
    // raised while the file is read). The returned Snapshot has everything else; its
    // device_traces lists are empty. Memory no longer grows with the entries: the pickle memo's
    // old chunks (PickleMemo, one or two bytes a slot, two slots an entry) go to
    // entries.coldBytes() when it gives a store (the importer's is a temporary file), and stay in
    // memory otherwise. Throws FormatError, or StreamingUnsupported for a pickle that refers back
    // to an entry it already gave (read() it whole then); what the store throws (a full disk:
    // std::runtime_error) ends the read as it is.
    static Snapshot readStreaming(const std::string& path, SnapshotEntrySink& entries);
};

}  // namespace allocscope::formats
