#include "app/gui/ExperimentPanel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <string_view>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/CudaProbe.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/gui/FormAdapters.h"
#include "views/util/Formatting.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ConfigListWidget.h"
#include "views/widgets/ElasticHeightBox.h"
#include "views/widgets/ParamFormWidget.h"

namespace allocscope::app {

namespace {
constexpr quint64 kDefaultContextMemory = 552'402'944ull;  // what a CUDA context takes on the presets

// The "Compare with" list in QSettings: an array of (config, checked), and whether it is open.
// An array rather than a string list: config lines contain commas and the defaults are "".
const QString kCompareListKey = QStringLiteral("compare/configs");
const QString kCompareExpandedKey = QStringLiteral("compare/expanded");

// Two lines are the same config when parseConfig reads the same AllocatorConfig from them;
// formatConfig writes that config one canonical way ("" for the defaults).
QString canonicalConfig(const QString& text) {
    const QByteArray utf8 = text.trimmed().toUtf8();
    const alloc::ParseResult parsed = alloc::parseConfig(std::string_view(utf8.constData(), static_cast<std::size_t>(utf8.size())));
    return parsed.accepted() ? QString::fromStdString(alloc::formatConfig(parsed.config)) : text.trimmed();
}
}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent)
    : QWidget(parent), workload_(new QComboBox(this)), description_(new QLabel(this)),
      recordingInfo_(new QLabel(this)), fraction_(new QDoubleSpinBox(this)), limitInfo_(new QLabel(this)), params_(new views::ParamFormWidget(this)),
      seed_(new QSpinBox(this)), gpu_(new QComboBox(this)), config_(new views::ConfigEditorWidget(this)),
      compareList_(new views::ConfigListWidget(this)), run_(new QPushButton(tr("&Run"), this)), compare_(new QPushButton(tr("Co&mpare"), this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* program = new QGroupBox(tr("Program"), this);
    auto* form = new QFormLayout(program);
    form_ = form;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const auto& w : alloc::WorkloadRegistry::instance().all()) {
        workload_->addItem(QString::fromStdString(w->name()), QString::fromStdString(w->name()));
        workload_->setItemData(workload_->count() - 1, QString::fromStdString(w->summary()), Qt::ToolTipRole);
    }
    workload_->setToolTip(tr("The program to run through the allocator: a demo workload, or the selected run's recording"));
    auto* workloadLabel = new QLabel(tr("&Workload"), program);
    workloadLabel->setBuddy(workload_);
    form->addRow(workloadLabel, workload_);
    description_->setWordWrap(true);
    description_->setToolTip(tr("What the workload does"));
    form->addRow(description_);
    recordingInfo_->setWordWrap(true);
    recordingInfo_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    recordingInfo_->setToolTip(tr("The recording Run and Compare replay: its file, trace entries, device, recorded config and the GPU it was replayed on"));
    form->addRow(recordingInfo_);
    form->addRow(params_);
    seed_->setRange(0, 1'000'000'000);
    seed_->setValue(1);
    seed_->setToolTip(tr("Seed of the workload's random choices (same seed, same program)"));
    auto* seedLabel = new QLabel(tr("S&eed"), program);
    seedLabel->setBuddy(seed_);
    form->addRow(seedLabel, seed_);
    for (const alloc::GpuPreset& p : alloc::gpuPresets()) {
        gpu_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(p.name), views::Formatting::bytes(static_cast<qint64>(p.totalMemory))));
        const int i = gpu_->count() - 1;
        gpu_->setItemData(i, QString::fromStdString(p.name), Qt::UserRole);
        gpu_->setItemData(i, static_cast<qulonglong>(p.totalMemory), Qt::UserRole + 1);
        gpu_->setItemData(i, static_cast<qulonglong>(p.contextMemory), Qt::UserRole + 2);
        gpu_->setItemData(i, QStringLiteral("preset"), Qt::UserRole + 3);
        gpu_->setItemData(i, QString::fromStdString(p.description), Qt::ToolTipRole);
    }
    // Real GPUs lend their name and size; the run is still simulated (the recording must be
    // reproducible), so the device itself is never touched here.
    const alloc::CudaProbeResult probe = alloc::probeCudaDevices();
    for (const alloc::CudaDeviceDesc& d : probe.devices) {
        gpu_->addItem(QStringLiteral("GPU %1: %2 (%3)").arg(d.index).arg(QString::fromStdString(d.name), views::Formatting::bytes(static_cast<qint64>(d.totalMemory))));
        const int i = gpu_->count() - 1;
        gpu_->setItemData(i, QString::fromStdString(d.name), Qt::UserRole);
        gpu_->setItemData(i, static_cast<qulonglong>(d.totalMemory), Qt::UserRole + 1);
        gpu_->setItemData(i, static_cast<qulonglong>(kDefaultContextMemory), Qt::UserRole + 2);
        gpu_->setItemData(i, QStringLiteral("device"), Qt::UserRole + 3);
    }
    gpu_->setToolTip(probe.devices.empty()
                         ? tr("The simulated GPU: total memory and what its CUDA context takes.\nNo real GPU here: %1")
                               .arg(QString::fromStdString(probe.reason))
                         : tr("The simulated GPU: a preset, or the size of a real GPU of this machine"));
    auto* gpuLabel = new QLabel(tr("&GPU"), program);
    gpuLabel->setBuddy(gpu_);
    form->addRow(gpuLabel, gpu_);
    fraction_->setRange(0.0, 1.0);
    fraction_->setDecimals(4);
    fraction_->setSingleStep(0.01);
    fraction_->setValue(1.0);
    fraction_->setToolTip(tr("torch.cuda.set_per_process_memory_fraction for the replay: the share of the GPU's memory "
                             "the allocator may use (1 = no cap)"));
    auto* fractionLabel = new QLabel(tr("Memor&y fraction"), program);  // Alt+F is the File menu
    fractionLabel->setBuddy(fraction_);
    form->addRow(fractionLabel, fraction_);
    // Plain text in the label's own palette colour: readable in the light and the dark theme.
    limitInfo_->setWordWrap(true);
    limitInfo_->setTextFormat(Qt::PlainText);
    limitInfo_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(limitInfo_);
    layout->addWidget(program);

    // The editor's form scrolls inside itself: its box takes the height left by the controls
    // around it rather than the whole form (which would push Compare below the fold at 720 px).
    auto* configBox = new views::ElasticHeightBox(this);
    auto* configLayout = new QVBoxLayout(configBox);
    configLayout->setContentsMargins(0, 0, 0, 0);
    config_->setValidator(&validateConfigText);
    config_->setFormatter(&formatConfigValues);
    config_->setToolTip(tr("The allocator config of the next run, checked as PyTorch 2.11 reads it"));
    configLayout->addWidget(config_);
    layout->addWidget(configBox, 1);

    compareList_->setValidator(&validateConfigText);
    compareList_->setNormalizer(&canonicalConfig);
    layout->addWidget(compareList_);

    auto* buttons = new QHBoxLayout;
    run_->setToolTip(tr("Run the workload under this config and record it as a new run of the session (Ctrl+R)"));
    run_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    buttons->addWidget(run_);
    buttons->addWidget(compare_);
    layout->addLayout(buttons);

    connect(workload_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onWorkloadChanged);
    // The list's first row follows the editor: textChanged on every edit, validityChanged when
    // the verdict flips (a form change); both come after the editor has validated.
    const auto followEditor = [this] {
        compareList_->setCurrentConfig(config_->text(), config_->isAccepted());
        updateButtons();
    };
    connect(config_, &views::ConfigEditorWidget::validityChanged, this, followEditor);
    connect(config_, &views::ConfigEditorWidget::textChanged, this, followEditor);
    connect(compareList_, &views::ConfigListWidget::entriesChanged, this, [this] {
        saveCompareList();
        updateButtons();
    });
    connect(compareList_, &views::ConfigListWidget::expandedChanged, this, &ExperimentPanel::saveCompareList);
    // GPU or fraction changed by hand: the replay no longer runs at the inferred limit.
    const auto limitChanged = [this] {
        if (presetting_) return;
        limitEdited_ = true;
        updateLimitLine();
    };
    connect(gpu_, &QComboBox::currentIndexChanged, this, limitChanged);
    connect(fraction_, &QDoubleSpinBox::valueChanged, this, limitChanged);
    connect(run_, &QPushButton::clicked, this, &ExperimentPanel::runRequested);
    connect(compare_, &QPushButton::clicked, this, &ExperimentPanel::compareRequested);
    connect(config_, &views::ConfigEditorWidget::applyRequested, this, [this] {
        if (run_->isEnabled()) emit runRequested();
    });
    onWorkloadChanged();
    restoreCompareList();
    config_->setText(QString());
    compareList_->setCurrentConfig(config_->text(), config_->isAccepted());
    updateButtons();
}

void ExperimentPanel::restoreCompareList() {
    QSettings settings;
    QList<views::ConfigListEntry> entries;
    if (settings.contains(kCompareListKey + QStringLiteral("/size"))) {
        const int count = settings.beginReadArray(kCompareListKey);
        for (int i = 0; i < count; ++i) {
            settings.setArrayIndex(i);
            entries.append({settings.value(QStringLiteral("config")).toString(), settings.value(QStringLiteral("checked")).toBool()});
        }
        settings.endArray();
    } else {
        entries = views::ConfigListWidget::defaultEntries();  // first use
    }
    // Saved lines PyTorch refuses (an edited settings file) are left out and said in the list,
    // which then opens so the message is seen.
    const int refused = compareList_->setEntries(entries);
    // Otherwise collapsed until the user opens it: one line (with the count) keeps the panel
    // inside a 1280x720 window; the Compare button's tooltip lists what will run.
    compareList_->setExpanded(refused > 0 || settings.value(kCompareExpandedKey, false).toBool());
}

void ExperimentPanel::saveCompareList() const {
    QSettings settings;
    const QList<views::ConfigListEntry> entries = compareList_->entries();
    settings.remove(kCompareListKey);
    settings.beginWriteArray(kCompareListKey, static_cast<int>(entries.size()));
    for (int i = 0; i < entries.size(); ++i) {
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("config"), entries[i].config);
        settings.setValue(QStringLiteral("checked"), entries[i].checked);
    }
    settings.endArray();
    settings.setValue(kCompareExpandedKey, compareList_->isExpanded());
}

bool ExperimentPanel::isRecordingChosen() const { return recording_ && workload_->currentData(Qt::UserRole + 1).toBool(); }

void ExperimentPanel::setRecording(const std::optional<RecordingSource>& recording) {
    const bool same = recording && recording_ && recording->path == recording_->path && recording->device == recording_->device;
    if (same) {
        // Another run of the same file: keep what the user set, and the limit inferred for the
        // file (a run on another GPU has none); fields that were not at that limit stay "given".
        const std::optional<alloc::MemoryLimit> kept = recording_->limit;
        recording_ = recording;
        if (!recording_->limit && kept) recording_->limit = kept;
        else if (recording_->limit && !kept) limitEdited_ = true;
        updateLimitLine();
        workload_->setItemData(0, recording->description(), Qt::ToolTipRole);
        if (isRecordingChosen()) recordingInfo_->setText(recording->description());
        return;
    }
    if (recording_) {
        const QSignalBlocker block(workload_);
        workload_->removeItem(0);
    }
    recording_ = recording;
    if (!recording_) {
        onWorkloadChanged();
        return;
    }
    {
        const QSignalBlocker block(workload_);
        workload_->insertItem(0, tr("This recording: %1").arg(recording->fileName));
        workload_->setItemData(0, true, Qt::UserRole + 1);
        workload_->setItemData(0, recording->description(), Qt::ToolTipRole);
        workload_->setCurrentIndex(0);
    }
    onWorkloadChanged();
    config_->setText(recording->recordedConfig);
    presetting_ = true;
    limitEdited_ = false;
    fraction_->setValue(recording->memoryFraction);
    selectGpu(recording->totalMemory, recording->gpu);
    presetting_ = false;
    updateLimitLine();
}

void ExperimentPanel::setRecordings(const RecordingSources& recordings) {
    recordings_ = recordings;
    if (recordings_.contains(selectedRun_)) setRecording(recordings_.value(selectedRun_));
}

void ExperimentPanel::followRun(int run, const views::RunListData& runs) {
    selectedRun_ = run;
    if (recordings_.contains(run)) setRecording(recordings_.value(run));
    else if (!RecordingCatalog::mayBeReplay(runs, run)) setRecording(std::nullopt);
}

void ExperimentPanel::selectGpu(quint64 totalMemory, const QString& name) {
    // A recorded size that is no preset gets an entry of its own at the top.
    const int old = gpu_->findData(QStringLiteral("recorded"), Qt::UserRole + 3);
    if (old >= 0) gpu_->removeItem(old);
    for (int i = 0; i < gpu_->count(); ++i) {
        if (gpu_->itemData(i, Qt::UserRole + 1).toULongLong() == totalMemory) {
            gpu_->setCurrentIndex(i);
            return;
        }
    }
    gpu_->insertItem(0, tr("recorded: %1 (%2)").arg(name, views::Formatting::bytes(static_cast<qint64>(totalMemory))));
    gpu_->setItemData(0, name, Qt::UserRole);
    gpu_->setItemData(0, static_cast<qulonglong>(totalMemory), Qt::UserRole + 1);
    gpu_->setItemData(0, static_cast<qulonglong>(kDefaultContextMemory), Qt::UserRole + 2);
    gpu_->setItemData(0, QStringLiteral("recorded"), Qt::UserRole + 3);
    gpu_->setItemData(0, tr("The total memory the recording was replayed with"), Qt::ToolTipRole);
    gpu_->setCurrentIndex(0);
}

alloc::MemoryLimit ExperimentPanel::givenLimit() const {
    alloc::MemoryLimit given;
    given.source = alloc::MemoryLimit::Source::Explicit;
    given.deviceName = gpu_->currentData(Qt::UserRole).toString().toStdString();
    given.totalMemory = gpu_->currentData(Qt::UserRole + 1).toULongLong();
    given.otherMemory = gpu_->currentData(Qt::UserRole + 2).toULongLong();
    if (fraction_->value() < 1.0) given.memoryFraction = fraction_->value();
    // PyTorch's cap (fraction x total) or what the CUDA context leaves of the device.
    given.bytes = given.memoryFraction ? static_cast<std::uint64_t>(*given.memoryFraction * static_cast<double>(given.totalMemory))
                                       : given.totalMemory - std::min(given.otherMemory, given.totalMemory);
    given.high = given.bytes;
    if (recording_ && recording_->limit) {
        given.oomEntry = recording_->limit->oomEntry;
        given.low = recording_->limit->peakReserved;
    }
    return given;
}

void ExperimentPanel::updateLimitLine() {
    const bool shown = isRecordingChosen() && recording_->limit.has_value();
    form_->setRowVisible(limitInfo_, shown);
    if (!shown) {
        limitInfo_->clear();
        return;
    }
    const alloc::MemoryLimit& inferred = *recording_->limit;
    if (limitEdited_) {
        limitInfo_->setText(QString::fromStdString(givenLimit().describe()));
        limitInfo_->setToolTip(tr("GPU or memory fraction changed by hand: Run and Compare replay at this limit, not the one "
                                  "inferred from the recorded OOM (%1)")
                                   .arg(views::Formatting::bytes(static_cast<qint64>(inferred.bytes))));
        return;
    }
    limitInfo_->setText(QString::fromStdString(inferred.describe()));
    limitInfo_->setToolTip(inferred.isInterval()
                               ? tr("Every limit from %1 to %2 (%3 to %4 B) replays the recording exactly; Run and Compare use %5")
                                     .arg(views::Formatting::bytes(static_cast<qint64>(inferred.low)),
                                          views::Formatting::bytes(static_cast<qint64>(inferred.high)))
                                     .arg(inferred.low)
                                     .arg(inferred.high)
                                     .arg(views::Formatting::bytes(static_cast<qint64>(inferred.bytes)))
                               : tr("The limit the recorded OOM implies; Run and Compare replay at it"));
}

void ExperimentPanel::onWorkloadChanged() {
    const bool recording = isRecordingChosen();
    form_->setRowVisible(description_, !recording);
    form_->setRowVisible(params_, !recording);
    form_->setRowVisible(seed_, !recording);
    form_->setRowVisible(recordingInfo_, recording);
    form_->setRowVisible(fraction_, recording);
    updateLimitLine();
    updateButtons();
    if (recording) {
        recordingInfo_->setText(recording_->description());
        return;
    }
    const alloc::Workload* w = alloc::WorkloadRegistry::instance().find(workload_->currentData().toString().toStdString());
    if (w == nullptr) return;
    description_->setText(QString::fromStdString(w->summary()));
    description_->setToolTip(QString::fromStdString(w->description()));
    params_->setSpecs(toParamSpecs(w->params()));
    seed_->setEnabled(w->usesSeed());
    for (int i = 0; i < gpu_->count(); ++i) {
        if (gpu_->itemData(i, Qt::UserRole).toString() == QString::fromStdString(w->defaultGpu())) gpu_->setCurrentIndex(i);
    }
}

void ExperimentPanel::updateButtons() {
    const bool ok = config_->isAccepted();
    run_->setEnabled(!busy_ && ok);
    const bool recording = isRecordingChosen();
    run_->setToolTip(recording ? tr("Replay the recording under this config and GPU and record it as a new run of the session (Ctrl+R)")
                               : tr("Run the workload under this config and record it as a new run of the session (Ctrl+R)"));
    const QList<QPair<QString, QString>> configs = compareList_->chosenConfigs();
    compare_->setEnabled(!busy_ && ok && configs.size() >= 2);
    // The tooltip says why Compare is off, or exactly what it will run.
    if (!ok) {
        compare_->setToolTip(tr("Compare is off: PyTorch would refuse the config in the editor; fix it first"));
    } else if (configs.size() < 2) {
        compare_->setToolTip(tr("Compare is off: it needs at least two different configs. Check another row of "
                                "“Compare with” or add a line there."));
    } else {
        QStringList labels;
        for (const auto& c : configs) labels << QStringLiteral("• ") + c.first;
        compare_->setToolTip((recording ? tr("Replay the recording under these %n configs and compare them with it in the Compare tab:\n", nullptr,
                                             static_cast<int>(configs.size()))
                                        : tr("Run the workload under these %n configs and compare them in the Compare tab:\n", nullptr,
                                static_cast<int>(configs.size()))) +
                             labels.join(QLatin1Char('\n')));
    }
}

void ExperimentPanel::setBusy(bool busy) {
    busy_ = busy;
    updateButtons();
}

void ExperimentPanel::selectWorkload(const QString& name) {
    const int i = workload_->findData(name);
    if (i >= 0) workload_->setCurrentIndex(i);
}

void ExperimentPanel::setConfigText(const QString& text) { config_->setText(text); }

QString ExperimentPanel::gpuPresetName() const {
    return gpu_->currentData(Qt::UserRole + 3).toString() == QLatin1String("preset") ? gpu_->currentData(Qt::UserRole).toString() : QString();
}

std::optional<RunChoice> ExperimentPanel::choice(QString* why) const {
    if (!config_->isAccepted()) {
        if (why) *why = tr("PyTorch would reject this PYTORCH_CUDA_ALLOC_CONF: %1").arg(config_->lastValidation().verdict);
        return std::nullopt;
    }
    RunChoice c;
    c.workload = workload_->currentData().toString();
    c.params = params_->values();
    c.seed = static_cast<quint64>(seed_->value());
    c.gpuName = gpu_->currentData(Qt::UserRole).toString();
    c.totalMemory = gpu_->currentData(Qt::UserRole + 1).toULongLong();
    c.otherMemory = gpu_->currentData(Qt::UserRole + 2).toULongLong();
    c.config = config_->text().trimmed();
    if (isRecordingChosen()) {
        c.whatIf = WhatIfSetup{*recording_, c.config, c.gpuName, c.totalMemory, c.otherMemory, std::nullopt, QString()};
        if (fraction_->value() < 1.0) c.whatIf->memoryFraction = fraction_->value();
        if (const std::optional<alloc::MemoryLimit>& limit = recording_->limit) {
            if (!limitEdited_) {
                // The exact inferred device: the fields show its fraction to 4 decimals and a
                // preset's CUDA context, which may be a few MiB off the limit.
                c.whatIf->gpuName = QString::fromStdString(limit->deviceName);
                c.whatIf->totalMemory = limit->totalMemory;
                c.whatIf->otherMemory = limit->otherMemory;
                c.whatIf->memoryFraction = limit->memoryFraction;
            }
            c.whatIf->limitLine = limitInfo_->text();
        }
    }
    return c;
}

QList<QPair<QString, QString>> ExperimentPanel::compareConfigs() const { return compareList_->chosenConfigs(); }

}  // namespace allocscope::app
