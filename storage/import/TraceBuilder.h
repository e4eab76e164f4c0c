#pragma once
// Builds the allocator's RecordedTrace(s) from a snapshot one trace entry at a time: the in-memory
// import (tracesFromSnapshot) feeds it every entry of a Snapshot, the streaming import
// (SnapshotReader::readStreaming) each entry as the file is read, so both give the same traces.
//
// Per entry it keeps only the compact RecordedEntry (stacks interned once per distinct frame
// list); the rest of the snapshot (segments, settings, annotations) is applied by finish().
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator/replay/RecordedTrace.h"
#include "storage/formats/Snapshot.h"
#include "storage/formats/SnapshotEntrySink.h"
#include "storage/import/SpilledColdBytes.h"

namespace allocscope::storage {

class TraceBuilder final : public formats::SnapshotEntrySink {
public:
    TraceBuilder() = default;
    // Not copied or moved: lastDevice_ points into devices_.
    TraceBuilder(const TraceBuilder&) = delete;
    TraceBuilder& operator=(const TraceBuilder&) = delete;

    // Bad input (an unknown action, an entry without the address its action needs) throws
    // formats::FormatError located at "device_traces[D][I]".
    void onEntry(std::size_t device, std::size_t index, const formats::TraceEntry& entry) override;
    void onProgress(std::uint64_t bytesRead, std::uint64_t totalBytes) override {
        if (progress) progress(bytesRead, totalBytes);
    }
    // A streaming read's pickle memo keeps its old chunks here, in a temporary file once they
    // pass a few MiB (SpilledColdBytes), so that the import's memory does not grow with the file.
    // Made on the first call; finish() lets it go.
    formats::ColdBytes* coldBytes() override;

    // Room for `entries` more entries of `device` (the in-memory import knows how many).
    void reserve(std::size_t device, std::size_t entries);
    // A streaming read's guess (from the file size) of how many entries the first device with
    // entries will have: room is made at once, so growing never holds two copies. Room that is
    // never filled is never touched and costs no memory.
    void expect(std::size_t entries) { expected_ = entries; }

    // One trace per device that had entries or has segments in `rest`, in device order (see
    // tracesFromSnapshot). `rest`'s own device_traces are not read: entries come through onEntry.
    std::vector<alloc::RecordedTrace> finish(const formats::Snapshot& rest);

    // Told how far a streaming read is (bytes); may throw to stop it.
    std::function<void(std::uint64_t, std::uint64_t)> progress;
    // The entries' distinct user_metadata strings, first seen first (at most maxMetadata): where a
    // distributed job may say its rank.
    std::vector<std::string> userMetadata;
    std::size_t maxMetadata = 8;

private:
    // Interns frame lists into a trace's StackTable, converting each shared list once. Keeps a
    // handle on each list it saw, so the list's address stays a valid key.
    class Stacks {
    public:
        explicit Stacks(alloc::StackTable& table) : table_(table) {}
        std::uint32_t intern(const formats::FrameList& frames);

    private:
        alloc::StackTable& table_;
        std::unordered_map<const void*, std::pair<formats::FrameList, std::uint32_t>> ids_;
    };
    struct Device {
        alloc::RecordedTrace trace;
        std::unique_ptr<Stacks> stacks;
        // Each entry's time (0: no usable clock), for placing the phase marks at the end; kept
        // here, not in the entries, which the replay reads without them (RecordedEntry).
        alloc::SpillArray<std::int64_t> times;
    };
    Device& device(std::int64_t device);
    // What an entry's action names, found once per distinct action string: entries share a few
    // (SharedString), and a big snapshot has tens of millions of entries.
    enum class ActionKind : std::uint8_t { Ignored, Action, LegacyFree, Unknown };
    struct KnownAction {
        formats::SharedString name;
        ActionKind kind = ActionKind::Unknown;
        alloc::EventAction action = alloc::EventAction::Alloc;
    };
    const KnownAction& classify(const formats::SharedString& name);
    std::vector<KnownAction> actions_;
    KnownAction lastClassified_;

    std::map<std::int64_t, Device> devices_;
    Device* lastDevice_ = nullptr;  // device()'s last answer, for lastDeviceIndex_
    std::int64_t lastDeviceIndex_ = 0;
    std::unique_ptr<SpilledColdBytes> memo_;
    std::size_t expected_ = 0;
    std::string lastMetadata_;
};

}  // namespace allocscope::storage
