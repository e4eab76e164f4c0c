#include "app/ExperimentPanel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "allocator/device/CudaProbe.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/FormAdapters.h"
#include "views/util/Formatting.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ParamFormWidget.h"

namespace allocscope::app {

namespace {
constexpr quint64 kDefaultContextMemory = 552'402'944ull;  // what a CUDA context takes on the presets
}

ExperimentPanel::ExperimentPanel(QWidget* parent)
    : QWidget(parent), workload_(new QComboBox(this)), description_(new QLabel(this)), params_(new views::ParamFormWidget(this)),
      seed_(new QSpinBox(this)), gpu_(new QComboBox(this)), config_(new views::ConfigEditorWidget(this)),
      run_(new QPushButton(tr("&Run"), this)), compare_(new QPushButton(tr("Co&mpare"), this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* program = new QGroupBox(tr("Program"), this);
    auto* form = new QFormLayout(program);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const auto& w : alloc::WorkloadRegistry::instance().all()) {
        workload_->addItem(QString::fromStdString(w->name()), QString::fromStdString(w->name()));
        workload_->setItemData(workload_->count() - 1, QString::fromStdString(w->summary()), Qt::ToolTipRole);
    }
    workload_->setToolTip(tr("The demo workload to run through the allocator"));
    auto* workloadLabel = new QLabel(tr("&Workload"), program);
    workloadLabel->setBuddy(workload_);
    form->addRow(workloadLabel, workload_);
    description_->setWordWrap(true);
    description_->setToolTip(tr("What the workload does"));
    form->addRow(description_);
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
    layout->addWidget(program);

    auto* configBox = new QWidget(this);
    auto* configLayout = new QVBoxLayout(configBox);
    configLayout->setContentsMargins(0, 0, 0, 0);
    config_->setValidator(&validateConfigText);
    config_->setFormatter(&formatConfigValues);
    config_->setToolTip(tr("The allocator config of the next run, checked as PyTorch 2.11 reads it"));
    configLayout->addWidget(config_);
    layout->addWidget(configBox, 1);

    auto* buttons = new QHBoxLayout;
    run_->setToolTip(tr("Run the workload under this config and record it as a new run of the session (Ctrl+R)"));
    run_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    compare_->setToolTip(tr("Run the workload under this config, the defaults and expandable_segments:True, "
                            "and compare them in the Compare tab"));
    buttons->addWidget(run_);
    buttons->addWidget(compare_);
    layout->addLayout(buttons);

    connect(workload_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onWorkloadChanged);
    connect(config_, &views::ConfigEditorWidget::validityChanged, this, &ExperimentPanel::updateButtons);
    connect(run_, &QPushButton::clicked, this, &ExperimentPanel::runRequested);
    connect(compare_, &QPushButton::clicked, this, &ExperimentPanel::compareRequested);
    connect(config_, &views::ConfigEditorWidget::applyRequested, this, [this] {
        if (run_->isEnabled()) emit runRequested();
    });
    onWorkloadChanged();
    config_->setText(QString());
    updateButtons();
}

void ExperimentPanel::onWorkloadChanged() {
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
    compare_->setEnabled(!busy_ && ok);
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
    return c;
}

QList<QPair<QString, QString>> ExperimentPanel::compareConfigs() const {
    QList<QPair<QString, QString>> configs;
    const QString mine = config_->text().trimmed();
    configs.append({tr("default"), QString()});
    if (!mine.isEmpty()) configs.append({mine, mine});
    if (mine != QLatin1String("expandable_segments:True")) configs.append({QStringLiteral("expandable_segments:True"), QStringLiteral("expandable_segments:True")});
    return configs;
}

}  // namespace allocscope::app
