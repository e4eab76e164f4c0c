#pragma once
// Plain descriptions of the forms views build for domain objects they must not know: the
// allocator config (PYTORCH_CUDA_ALLOC_CONF) and a workload's parameters. app/ fills them and
// supplies the callbacks that reach the allocator (parseConfig / formatConfig).
#include <QString>
#include <QStringList>
#include <QVariant>
#include <QVariantMap>

#include <functional>
#include <optional>
#include <vector>

namespace allocscope::views {

// ---- config editor ----

enum class FieldKind {
    Bool,       // QVariant(bool)
    Int,        // QVariant(qlonglong); `unsetValue` (if set) means "option absent"
    Double,     // QVariant(double)
    Choice,     // QVariant(QString), one of `choices`
    Divisions,  // QVariant(QVariantList of 16 ints): roundup_power2_divisions per interval
};

struct ConfigFieldSpec {
    QString key;     // the option's name in the config string ("max_split_size_mb")
    QString label;   // shown in the form
    QString help;    // tooltip
    QString group;   // form section ("Device allocator", "Pinned host memory")
    FieldKind kind = FieldKind::Bool;
    double minimum = 0;
    double maximum = 0;
    double step = 1;
    int decimals = 2;
    QString suffix;        // " MiB"
    QVariant defaultValue;
    QString unsetText;     // text shown at the minimum meaning "not set" ("unlimited", "off")
    QStringList choices;   // Choice
};

// key -> value, as described by FieldKind.
using ConfigFormValues = QVariantMap;

struct ValidationIssue {
    enum class Severity { Error, Warning, Note };
    Severity severity = Severity::Error;
    QString message;
    int offset = -1;   // character position in the text, -1 = none
    int length = 0;    // 0 = a position (e.g. end of input)
    QString suggestion;
};

struct ValidationResult {
    bool accepted = true;
    QString verdict;        // one line: "accepted", "ValueError at first CUDA use: ..."
    std::vector<ValidationIssue> issues;
    QString correctedText;  // a string that would be accepted and is likely meant ("" = none)
    // The values the text sets, for the text -> form direction (absent: leave the form alone).
    std::optional<ConfigFormValues> values;
};

using ConfigValidator = std::function<ValidationResult(const QString& text)>;
using ConfigFormatter = std::function<QString(const ConfigFormValues& values)>;

// The PYTORCH_CUDA_ALLOC_CONF options of PyTorch 2.11 with their defaults, for the form. Only
// labels and ranges: what they mean is the allocator's business.
std::vector<ConfigFieldSpec> pytorchConfigFieldSpecs();

// ---- workload parameters ----

enum class ParamKind { Int, Double, Bool, Choice };

struct ParamSpec {
    QString key;
    QString label;
    QString help;
    ParamKind kind = ParamKind::Int;
    double minimum = 0;
    double maximum = 100;
    double step = 1;
    int decimals = 2;
    QString suffix;
    QVariant defaultValue;  // qlonglong / double / bool / QString (a choice)
    QStringList choices;
};

using ParamValues = QVariantMap;

}  // namespace allocscope::views
