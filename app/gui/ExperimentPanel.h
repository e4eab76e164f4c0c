#pragma once
// The lower half of the left dock: what to run next. A workload picker with its parameters as a
// form (from alloc::WorkloadRegistry), the seed, the simulated GPU (presets, plus the real GPUs
// this machine has), the allocator config editor (parseConfig as you type), the "Compare with"
// list (which configs Compare runs, kept in QSettings under compare/) and the Run and Compare
// buttons. The panel only collects the choice; the window starts the jobs.
#include <QString>
#include <QVariantMap>
#include <QWidget>

#include <optional>

#include "app/gui/WhatIfSetup.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;

namespace allocscope::views {
class ConfigEditorWidget;
class ConfigListWidget;
class ParamFormWidget;
}  // namespace allocscope::views

namespace allocscope::app {

struct RunChoice {
    QString workload;
    QVariantMap params;
    quint64 seed = 1;
    QString gpuName;            // preset name or the real device's name
    quint64 totalMemory = 0;
    quint64 otherMemory = 0;
    QString config;             // PYTORCH_CUDA_ALLOC_CONF
    // "This recording" is the program (workload, params and seed unused then): the replay of it
    // under `config` on the GPU above and the memory fraction field (1 = no cap).
    std::optional<WhatIfSetup> whatIf;
};

class ExperimentPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExperimentPanel(QWidget* parent = nullptr);

    // What the form says now; nullopt (with *why) when the config is not accepted.
    std::optional<RunChoice> choice(QString* why = nullptr) const;
    // The configs the Compare button compares, as (label, PYTORCH_CUDA_ALLOC_CONF): the editor's
    // config first (always compared, when PyTorch accepts it), then the rows checked in the
    // "Compare with" list, in list order; a config equal to an earlier one (same canonical
    // formatConfig string) appears once. Compare is enabled only when this holds 2 or more.
    QList<QPair<QString, QString>> compareConfigs() const;
    QString gpuPresetName() const;  // "" for a real GPU

    void setBusy(bool busy);  // disables Run / Compare while a recording runs
    void selectWorkload(const QString& name);
    void setConfigText(const QString& text);
    // The selected run's recording (nullopt: the run is no replay of a file). A new recording is
    // offered as "This recording" at the top of the Program list and chosen, the config editor
    // set to its recorded PYTORCH_CUDA_ALLOC_CONF, the GPU to its total memory and the memory
    // fraction to its fraction; the same recording again leaves the user's edits alone.
    void setRecording(const std::optional<RecordingSource>& recording);
    // The session's recordings by run number (RecordingCatalog::collect, read after the run
    // list), and the run the user selected: the panel offers that run's recording, offers none
    // for a workload run, and keeps what it offers for a replay run not collected yet (just
    // recorded) until the next setRecordings.
    void setRecordings(const RecordingSources& recordings);
    void followRun(int run, const views::RunListData& runs);
    bool isRecordingChosen() const;
    QDoubleSpinBox* memoryFractionBox() const { return fraction_; }
    // Under the GPU and fraction of "This recording": the limit its import inferred from the
    // OOM (MemoryLimit::describe), or, once the user changed GPU or fraction, the limit as given.
    // Hidden for a recording without an inferred limit.
    QLabel* limitLabel() const { return limitInfo_; }

    QComboBox* workloadBox() const { return workload_; }
    QComboBox* gpuBox() const { return gpu_; }
    views::ParamFormWidget* paramForm() const { return params_; }
    views::ConfigEditorWidget* configEditor() const { return config_; }
    views::ConfigListWidget* compareList() const { return compareList_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* compareButton() const { return compare_; }
    QSpinBox* seedBox() const { return seed_; }

signals:
    void runRequested();
    void compareRequested();

private:
    void onWorkloadChanged();
    void updateButtons();
    void restoreCompareList();
    void saveCompareList() const;
    void selectGpu(quint64 totalMemory, const QString& name);
    void updateLimitLine();
    // The limit as the GPU and fraction fields now give it (MemoryLimit::Source::Explicit).
    alloc::MemoryLimit givenLimit() const;

    QComboBox* workload_;
    QLabel* description_;
    QLabel* recordingInfo_;
    QFormLayout* form_ = nullptr;
    QDoubleSpinBox* fraction_;
    QLabel* limitInfo_;
    // recording_->limit holds until the user edits GPU or fraction: the fields show it rounded
    // (4 decimals, a preset's context), so Run and Compare take its exact device instead.
    bool limitEdited_ = false;
    bool presetting_ = false;  // setRecording is setting the fields: not the user's edit
    std::optional<RecordingSource> recording_;
    RecordingSources recordings_;
    int selectedRun_ = -1;
    views::ParamFormWidget* params_;
    QSpinBox* seed_;
    QComboBox* gpu_;
    views::ConfigEditorWidget* config_;
    views::ConfigListWidget* compareList_;
    QPushButton* run_;
    QPushButton* compare_;
    bool busy_ = false;
};

}  // namespace allocscope::app
