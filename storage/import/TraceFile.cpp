#include "storage/import/TraceFile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>

#include <sys/stat.h>

#include "storage/formats/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/formats/StreamingUnsupported.h"
#include "storage/import/TraceBuilder.h"
#include "storage/import/TraceImport.h"

namespace allocscope::storage {
namespace {

bool namedLikeSnapshot(const std::string& path) {
    const std::size_t dot = path.find_last_of('.');
    const std::size_t slash = path.find_last_of('/');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
    std::string ext = path.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == "pickle" || ext == "pkl" || ext == "json";
}

void collectMetadata(const formats::Snapshot& data, std::vector<std::string>& out) {
    for (const std::vector<formats::TraceEntry>& device : data.device_traces) {
        const formats::SharedString* last = nullptr;  // entries repeat one string: skip it cheaply
        for (const formats::TraceEntry& entry : device) {
            if (entry.user_metadata.empty() || (last != nullptr && entry.user_metadata.sharesWith(*last))) continue;
            last = &entry.user_metadata;
            if (std::find(out.begin(), out.end(), entry.user_metadata.str()) != out.end()) continue;
            out.push_back(entry.user_metadata.str());
            if (out.size() == TraceFile::kMaxMetadata) return;
        }
    }
}

// A pickle (its first byte is PROTO) that `mode` wants streamed. Anything else, including a file
// that cannot be opened, goes the whole-file way, which reports it as before.
bool streamable(const std::string& path, StreamMode mode, std::uint64_t& size) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) return false;
    struct stat info {};
    if (::fstat(::fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) return false;
    size = static_cast<std::uint64_t>(info.st_size);
    if (mode == StreamMode::Auto && size < TraceFile::kStreamFromBytes) return false;
    return std::fgetc(file.get()) == 0x80;
}

}  // namespace

TraceFormat TraceFile::detect(const std::string& path, std::string_view bytes) {
    if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) return TraceFormat::Snapshot;
    const std::size_t first = bytes.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[')) return TraceFormat::Snapshot;
    if (namedLikeSnapshot(path)) {
        // Without this, an empty or foreign .pickle went to the CSV reader and was refused for
        // its "header", which says nothing about what is wrong with a snapshot.
        throw formats::FormatError(first == std::string_view::npos
                                       ? "the file is empty, not a PyTorch memory snapshot"
                                       : "not a PyTorch memory snapshot (a pickle starts with byte 0x80, its JSON form with '{')",
                                   "byte 0");
    }
    return TraceFormat::RmmCsv;
}

TraceFile TraceFile::load(const std::string& path) { return load(path, StreamMode::Auto); }

TraceFile TraceFile::load(const std::string& path, StreamMode mode, const ReadProgress& progress) {
    TraceFile file;
    file.path = path;
    std::uint64_t size = 0;
    if (mode != StreamMode::Never && streamable(path, mode, size)) {
        TraceBuilder builder;
        builder.progress = progress;
        builder.maxMetadata = kMaxMetadata;
        // A trace entry takes about 90 bytes of a PyTorch pickle, rarely under 48.
        builder.expect(static_cast<std::size_t>(size / 48));
        try {
            const formats::Snapshot rest = formats::SnapshotReader::readStreaming(path, builder);
            file.traces = builder.finish(rest);
            file.userMetadata = std::move(builder.userMetadata);
            return file;
        } catch (const formats::StreamingUnsupported&) {
            // Valid, but not a shape the stream can follow: read it whole below.
        }
    }
    std::string bytes = formats::FileBytes::read(path);
    file.format = detect(path, bytes);
    if (file.format == TraceFormat::Snapshot) {
        // Each stage frees its input as soon as the next exists, so a big import holds at most two
        // of {file bytes, value tree, Snapshot, traces} at once (issue #5: peak memory).
        formats::Snapshot data;
        {
            const formats::PyTree tree = formats::SnapshotReader::parse(bytes);
            std::string().swap(bytes);
            data = formats::SnapshotReader::fromTree(tree);
        }
        collectMetadata(data, file.userMetadata);
        file.traces = tracesFromSnapshot(data);
    } else {
        file.traces.push_back(traceFromRmmLog(formats::RmmCsvReader::read(bytes)));
    }
    return file;
}

TraceFile TraceFile::read(const std::string& path) {
    TraceFile file;
    try {
        file = load(path);
    } catch (const formats::FormatError& e) {
        throw formats::FormatError(e.problem(), formats::FormatError::inFile(path, e.location()));
    } catch (const std::bad_alloc&) {
        throw formats::FormatError("not enough memory to read the trace", path);
    } catch (const std::exception& e) {
        throw formats::FormatError(e.what(), path);
    }
    // A snapshot yields no trace for a device without events or segments; an RMM log always yields
    // one, empty when the log has only its header.
    const bool empty = file.traces.empty() || (file.format == TraceFormat::RmmCsv && file.traces.front().entries.empty());
    if (empty) throw formats::FormatError("the trace holds no allocator events and no segments", path);
    return file;
}

alloc::Program TraceFile::program(const alloc::ProgramFromTraceOptions& options) const {
    return alloc::programFromTrace(traces.front(), options);
}

}  // namespace allocscope::storage
