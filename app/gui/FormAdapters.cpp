#include "app/gui/FormAdapters.h"

#include <QVariantList>

#include "app/gui/QtText.h"
#include "allocator/config/ConfigParser.h"

namespace allocscope::app {
namespace {

views::ValidationIssue::Severity toSeverity(alloc::DiagnosticSeverity severity) {
    switch (severity) {
        case alloc::DiagnosticSeverity::Error: return views::ValidationIssue::Severity::Error;
        case alloc::DiagnosticSeverity::Warning: return views::ValidationIssue::Severity::Warning;
        case alloc::DiagnosticSeverity::Note: return views::ValidationIssue::Severity::Note;
    }
    return views::ValidationIssue::Severity::Error;
}

QString verdictText(const alloc::ParseResult& result) {
    switch (result.verdict) {
        case alloc::Verdict::Accepted: return QStringLiteral("accepted by PyTorch 2.11");
        case alloc::Verdict::AbortAtImport: return QStringLiteral("`import torch` aborts: ") + qs(result.pytorchMessage);
        case alloc::Verdict::ValueErrorAtInit: return QStringLiteral("ValueError at the first CUDA use: ") + qs(result.pytorchMessage);
        case alloc::Verdict::RuntimeErrorAtInit: return QStringLiteral("RuntimeError at the first CUDA use: ") + qs(result.pytorchMessage);
        case alloc::Verdict::ValueErrorOnFirstUse: return QStringLiteral("ValueError at the first later read of the config: ") + qs(result.pytorchMessage);
        case alloc::Verdict::RuntimeErrorOnFirstUse: return QStringLiteral("RuntimeError at the first later read of the config: ") + qs(result.pytorchMessage);
    }
    return QString();
}

qlonglong mib(std::uint64_t bytes) { return static_cast<qlonglong>(bytes / alloc::kMiB); }

}  // namespace

views::ConfigFormValues configFormValues(const alloc::AllocatorConfig& c) {
    views::ConfigFormValues v;
    v.insert(QStringLiteral("backend"), c.backend == alloc::Backend::CudaMallocAsync ? QStringLiteral("cudaMallocAsync") : QStringLiteral("native"));
    v.insert(QStringLiteral("max_split_size_mb"), c.maxSplitSize == alloc::kUnlimited ? QVariant() : QVariant(mib(c.maxSplitSize)));
    v.insert(QStringLiteral("max_non_split_rounding_mb"),
             c.maxNonSplitRounding == c.largeSegmentSize ? QVariant() : QVariant(mib(c.maxNonSplitRounding)));
    v.insert(QStringLiteral("large_segment_size_mb"), c.largeSegmentSize == 20 * alloc::kMiB ? QVariant() : QVariant(mib(c.largeSegmentSize)));
    QVariantList divisions;
    for (std::uint64_t d : c.roundupPower2Divisions) divisions.push_back(static_cast<qlonglong>(d));
    v.insert(QStringLiteral("roundup_power2_divisions"), divisions);
    v.insert(QStringLiteral("garbage_collection_threshold"), c.garbageCollectionThreshold > 0 ? QVariant(c.garbageCollectionThreshold) : QVariant());
    v.insert(QStringLiteral("expandable_segments"), c.expandableSegments);
    v.insert(QStringLiteral("release_lock_on_cudamalloc"), c.releaseLockOnCudaMalloc);
    v.insert(QStringLiteral("graph_capture_record_stream_reuse"), c.graphCaptureRecordStreamReuse);
    v.insert(QStringLiteral("per_process_memory_fraction"), c.perProcessMemoryFraction ? QVariant(*c.perProcessMemoryFraction) : QVariant());
    v.insert(QStringLiteral("pinned_use_cuda_host_register"), c.pinnedUseCudaHostRegister);
    v.insert(QStringLiteral("pinned_num_register_threads"), static_cast<qlonglong>(c.pinnedNumRegisterThreads));
    v.insert(QStringLiteral("pinned_use_background_threads"), c.pinnedUseBackgroundThreads);
    v.insert(QStringLiteral("pinned_reserve_segment_size_mb"),
             c.pinnedReserveSegmentSizeMb == 0 ? QVariant() : QVariant(static_cast<qlonglong>(c.pinnedReserveSegmentSizeMb)));
    return v;
}

alloc::AllocatorConfig configFromFormValues(const views::ConfigFormValues& v) {
    alloc::AllocatorConfig c;
    const auto has = [&v](const char* key) { return v.value(QString::fromLatin1(key)).isValid(); };
    const auto integer = [&v](const char* key) { return static_cast<std::uint64_t>(v.value(QString::fromLatin1(key)).toLongLong()); };
    if (v.value(QStringLiteral("backend")).toString() == QLatin1String("cudaMallocAsync")) c.backend = alloc::Backend::CudaMallocAsync;
    if (has("large_segment_size_mb") && integer("large_segment_size_mb") > 0) c.largeSegmentSize = integer("large_segment_size_mb") * alloc::kMiB;
    c.maxNonSplitRounding = c.largeSegmentSize;
    if (has("max_split_size_mb") && integer("max_split_size_mb") > 0) c.maxSplitSize = integer("max_split_size_mb") * alloc::kMiB;
    if (has("max_non_split_rounding_mb") && integer("max_non_split_rounding_mb") > 0)
        c.maxNonSplitRounding = integer("max_non_split_rounding_mb") * alloc::kMiB;
    const QVariantList divisions = v.value(QStringLiteral("roundup_power2_divisions")).toList();
    for (int i = 0; i < divisions.size() && i < 16; ++i) c.roundupPower2Divisions[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(divisions[i].toLongLong());
    if (has("garbage_collection_threshold")) c.garbageCollectionThreshold = v.value(QStringLiteral("garbage_collection_threshold")).toDouble();
    c.expandableSegments = v.value(QStringLiteral("expandable_segments")).toBool();
    c.releaseLockOnCudaMalloc = v.value(QStringLiteral("release_lock_on_cudamalloc")).toBool();
    c.graphCaptureRecordStreamReuse = v.value(QStringLiteral("graph_capture_record_stream_reuse")).toBool();
    if (has("per_process_memory_fraction") && v.value(QStringLiteral("per_process_memory_fraction")).toDouble() > 0)
        c.perProcessMemoryFraction = v.value(QStringLiteral("per_process_memory_fraction")).toDouble();
    c.pinnedUseCudaHostRegister = v.value(QStringLiteral("pinned_use_cuda_host_register")).toBool();
    if (has("pinned_num_register_threads")) c.pinnedNumRegisterThreads = integer("pinned_num_register_threads");
    c.pinnedUseBackgroundThreads = v.value(QStringLiteral("pinned_use_background_threads")).toBool();
    if (has("pinned_reserve_segment_size_mb")) c.pinnedReserveSegmentSizeMb = integer("pinned_reserve_segment_size_mb");
    return c;
}

views::ValidationResult validateConfigText(const QString& text) {
    const QByteArray utf8 = text.toUtf8();
    const alloc::ParseResult result = alloc::parseConfig(std::string_view(utf8.constData(), static_cast<std::size_t>(utf8.size())));
    views::ValidationResult out;
    out.accepted = result.accepted();
    out.verdict = verdictText(result);
    for (const alloc::ConfigDiagnostic& d : result.diagnostics) {
        views::ValidationIssue issue;
        issue.severity = toSeverity(d.severity);
        issue.message = qs(d.message);
        if (!d.expected.empty()) issue.message += QStringLiteral(" (expected %1)").arg(qs(d.expected));
        // Byte offsets -> character offsets (the same for the ASCII a config is made of).
        issue.offset = static_cast<int>(QString::fromUtf8(utf8.left(static_cast<qsizetype>(d.offset))).size());
        issue.length = static_cast<int>(QString::fromUtf8(utf8.mid(static_cast<qsizetype>(d.offset), static_cast<qsizetype>(d.length))).size());
        issue.suggestion = qs(d.suggestion);
        out.issues.push_back(issue);
    }
    const QString corrected = qs(result.correctedText);
    if (corrected != text.trimmed()) out.correctedText = corrected;
    if (result.accepted()) out.values = configFormValues(result.config);
    return out;
}

QString formatConfigValues(const views::ConfigFormValues& values) {
    return qs(alloc::formatConfig(configFromFormValues(values)));
}

std::vector<views::ParamSpec> toParamSpecs(const std::vector<alloc::ParamSpec>& specs) {
    std::vector<views::ParamSpec> out;
    for (const alloc::ParamSpec& s : specs) {
        views::ParamSpec p;
        p.key = qs(s.name);
        p.label = qs(s.name);
        p.label.replace(QLatin1Char('_'), QLatin1Char(' '));
        p.help = qs(s.help);
        p.minimum = s.min;
        p.maximum = s.max;
        const alloc::ParamValue def = alloc::parseParamValue(s, s.defaultValue);
        switch (s.type) {
            case alloc::ParamType::Int:
                p.kind = views::ParamKind::Int;
                p.defaultValue = static_cast<qlonglong>(def.i);
                break;
            case alloc::ParamType::Double:
                p.kind = views::ParamKind::Double;
                p.defaultValue = def.d;
                p.decimals = 3;
                p.step = (s.max - s.min) > 10 ? 1.0 : 0.05;
                break;
            case alloc::ParamType::Bool:
                p.kind = views::ParamKind::Bool;
                p.defaultValue = def.b;
                break;
            case alloc::ParamType::Choice:
                p.kind = views::ParamKind::Choice;
                p.defaultValue = qs(def.s);
                for (const std::string& c : s.choices) p.choices << qs(c);
                break;
        }
        out.push_back(p);
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> paramOverrides(const views::ParamValues& values) {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = values.begin(); it != values.end(); ++it) {
        QString text;
        const QVariant& v = it.value();
        if (v.typeId() == QMetaType::Bool) {
            text = v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
        } else if (v.typeId() == QMetaType::Double) {
            text = QString::number(v.toDouble(), 'g', 17);
        } else {
            text = v.toString();
        }
        out.emplace_back(it.key().toStdString(), text.toStdString());
    }
    return out;
}

}  // namespace allocscope::app
