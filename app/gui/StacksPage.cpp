#include "app/gui/StacksPage.h"

#include <QCheckBox>
#include <QList>
#include <QPair>
#include <QSettings>
#include <QTabWidget>
#include <QVBoxLayout>

#include "views/widgets/StacksWidget.h"

namespace allocscope::app {
namespace {
const char* const kHideInternalsKey = "view/stacksHideInternals";
}  // namespace

StacksPage::StacksPage(QWidget* parent, LessonNavigator* window)
    : QWidget(parent), window_(window), widget_(new views::StacksWidget(this)), controller_(new StacksController(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(widget_);
    widget_->hideInternals()->setChecked(QSettings().value(kHideInternalsKey, false).toBool());  // remembered
    connect(widget_, &views::StacksWidget::choiceChanged, this, [this] {
        QSettings().setValue(kHideInternalsKey, widget_->choice().hideInternals);
        dirty_ = run_ > 0;
        refresh();
    });
    connect(widget_, &views::StacksWidget::blockActivated, this, [this](quint64 address) {
        if (result_.run == run_ && result_.event >= 0) selectBlock(address, result_.event);
    });
    connect(controller_, &StacksController::ready, this, [this](const StacksResult& result) {
        result_ = result;
        widget_->setTree(result.tree);
        widget_->setTensors(result.tensors);
        widget_->setStatus(result.description);
        emit resultShown();
    });
    connect(controller_, &StacksController::failed, this, [this](const QString& message) {
        widget_->setTree({});
        widget_->setTensors({});
        widget_->setStatus(tr("Cannot read the live blocks: %1").arg(message), true);
        emit resultShown();
    });
}

StacksPage* StacksPage::install(QTabWidget* tabs, LessonNavigator* window) {
    auto* page = new StacksPage(tabs, window);
    const int index = tabs->addTab(page, tr("Stac&ks"));
    tabs->setTabToolTip(index, tr("Who holds the memory: bytes by call stack, the live tensors, and what changed between two points (Ctrl+6)"));
    return page;
}

void StacksPage::bringToFront(bool tensors) {
    if (auto* tabs = qobject_cast<QTabWidget*>(parentWidget() ? parentWidget()->parentWidget() : nullptr)) tabs->setCurrentWidget(this);
    widget_->subTabs()->setCurrentIndex(tensors ? 1 : 0);
}

void StacksPage::selectBlock(quint64 address, qint64 event) {
    if (!window_) return;
    if (event == event_) {
        window_->selectBlock(address);
        return;
    }
    pendingBlock_ = address;  // the tab shows another event (the peak): go there, then select
    pendingEvent_ = event;
    window_->goToEvent(event);
}

void StacksPage::setRun(const QString& path, int run, qint64 eventCount, const views::RunListData& runs) {
    const bool changed = path != path_ || run != run_;
    path_ = path;
    run_ = run;
    QList<QPair<int, QString>> others;
    for (const views::RunListRow& row : runs) {
        if (row.number != run) others.append({row.number, row.name});
    }
    widget_->setRuns(others);
    widget_->setEventCount(eventCount);
    if (changed) {
        event_ = -1;
        pendingEvent_ = -1;
        result_ = StacksResult{};
        widget_->setTree({});
        widget_->setTensors({});
        widget_->setStatus(eventCount > 0 ? tr("Loading…") : tr("This run has no events"));
    }
}

void StacksPage::setEvent(qint64 event) {
    if (pendingEvent_ >= 0 && event == pendingEvent_ && window_) {
        pendingEvent_ = -1;
        window_->selectBlock(pendingBlock_);
    }
    if (event == event_ && !dirty_) return;
    // At the peak the tab does not follow the scrubber: nothing to recompute.
    const bool follows = widget_->choice().at == views::StacksChoice::At::Scrubber || result_.run != run_ || result_.event < 0;
    event_ = event;
    if (!follows) return;
    dirty_ = run_ > 0;
    refresh();
}

void StacksPage::clear() {
    controller_->reset();
    path_.clear();
    run_ = 0;
    event_ = -1;
    pendingEvent_ = -1;
    dirty_ = false;
    result_ = StacksResult{};
    widget_->setTree({});
    widget_->setTensors({});
    widget_->setStatus(QString());
}

void StacksPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refresh();
}

void StacksPage::refresh() {
    // Only the tab on screen computes: scrubbing with another tab in front costs nothing here.
    if (!dirty_ || !isVisible() || run_ <= 0 || event_ < 0) return;
    dirty_ = false;
    StacksRequest request;
    request.choice = widget_->choice();
    if (request.choice.diff == views::StacksChoice::Diff::Run && request.choice.otherRun <= 0) {
        widget_->setTree({});  // not a diff: the tree would claim to be one
        widget_->setStatus(tr("No other run to compare with: open several snapshots together (File ▸ Open…) or record another run."), true);
        return;
    }
    widget_->setStatus(tr("Computing the live blocks at event %1…").arg(event_));
    request.path = path_;
    request.run = run_;
    request.event = event_;
    controller_->request(request);
}

}  // namespace allocscope::app
