#include "views/widgets/AllocationsWidget.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include "views/util/Formatting.h"
#include "views/widgets/AllocationsPlot.h"

namespace allocscope::views {
namespace {

constexpr int kDetails[] = {50, 200, 1000, 5000, 10000};
constexpr const char* kDetailKey = "allocations/detail";

}  // namespace

AllocationsWidget::AllocationsWidget(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    auto* row = new QHBoxLayout;
    auto* detailLabel = new QLabel(tr("&Detail:"), this);
    detail_ = new QComboBox(this);
    for (const int n : kDetails) detail_->addItem(tr("%1 largest").arg(Formatting::count(n)), n);
    detail_->setToolTip(tr("How many of the run's largest allocations are drawn one by one; "
                           "the others are merged into the grey \"smaller allocations\" band"));
    detailLabel->setBuddy(detail_);
    info_ = new QLabel(this);
    info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps rather than widening the tab: on one line its sentence forced the window past a
    // 1280 px screen with both docks open.
    info_->setWordWrap(true);
    whole_ = new QPushButton(tr("&Whole run"), this);
    whole_->setToolTip(tr("Show every event again (Home, or double-click the plot)"));
    row->addWidget(detailLabel);
    row->addWidget(detail_);
    row->addWidget(info_, 1);
    row->addWidget(whole_);
    layout->addLayout(row);
    plot_ = new AllocationsPlot(this);
    plot_->setToolTip(QString());
    layout->addWidget(plot_, 1);

    const int saved = QSettings().value(kDetailKey, 200).toInt();
    const int index = detail_->findData(saved);
    detail_->setCurrentIndex(index >= 0 ? index : 1);
    plot_->setDetail(detail_->currentData().toInt());
    connect(detail_, &QComboBox::currentIndexChanged, this, [this] {
        const int n = detail_->currentData().toInt();
        QSettings().setValue(kDetailKey, n);
        plot_->setDetail(n);
        updateInfo();
    });
    connect(whole_, &QPushButton::clicked, plot_, &AllocationsPlot::resetZoom);
    connect(plot_, &AllocationsPlot::eventRequested, this, &AllocationsWidget::eventRequested);
    connect(plot_, &AllocationsPlot::blockRequested, this, &AllocationsWidget::blockRequested);
    connect(plot_, &AllocationsPlot::windowChanged, this, &AllocationsWidget::updateInfo);
    updateInfo();
}

void AllocationsWidget::setData(AllocationsData input) {
    plot_->setData(std::move(input));
    updateInfo();
}

void AllocationsWidget::showLoading(const QString& message) {
    plot_->setData({});
    info_->setText(message);
}

void AllocationsWidget::setCurrentEvent(qint64 event) { plot_->setCurrentEvent(event); }

void AllocationsWidget::updateInfo() {
    const AllocationsData& d = plot_->data();
    if (d.eventCount == 0) {
        info_->clear();
        return;
    }
    QString text = tr("%1 largest allocations drawn one by one, stacked in allocation order · events %2–%3 of %4")
                       .arg(Formatting::count(plot_->drawnCount()))
                       .arg(Formatting::count(static_cast<qint64>(plot_->windowFirst())))
                       .arg(Formatting::count(static_cast<qint64>(plot_->windowLast())))
                       .arg(Formatting::count(d.eventCount));
    if (!d.anyStack) text += tr(" · no stacks recorded");
    info_->setText(text);
    info_->setToolTip(tr("Wheel: zoom time · Ctrl+wheel: zoom bytes · drag: pan · Shift+drag: zoom to a range · "
                         "click: select the allocation (inspector, segment map, scrubber) · double-click or Home: whole run"));
}

}  // namespace allocscope::views
