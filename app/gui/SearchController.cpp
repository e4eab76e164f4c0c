#include "app/gui/SearchController.h"

#include <QAction>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenuBar>
#include <QRegularExpression>
#include <QShortcut>
#include <QTabWidget>
#include <QTimer>

#include "storage/session/SessionError.h"
#include "storage/session/StackSearch.h"
#include "views/util/Formatting.h"
#include "views/widgets/AllocationsPlot.h"
#include "views/widgets/AllocationsWidget.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"

namespace allocscope::app {
namespace {

constexpr std::size_t kHeatmapOutlines = 2000;  // more would hide the heatmap under outlines

}  // namespace

SearchController::SearchController(const Views& views, QMainWindow* window) : QObject(window), views_(views) {
    field_ = new QLineEdit;
    field_->setPlaceholderText(tr("Find frame or 0x address (Ctrl+F)"));
    field_->setClearButtonEnabled(true);
    field_->setMinimumWidth(240);
    field_->setToolTip(tr("Highlights the blocks whose stack has a frame containing this text (function, file or "
                          "file:line), or the block containing a hex address, in the Allocations tab, the segment "
                          "map and the heatmap. Escape clears."));
    // In the menu bar's free right end, not in the view tabs' corner: there it took 260 px from
    // the tab bar, which then scrolled its seven tabs at 1280 px with both docks open.
    // The menu bar places its corner widget at that widget's size hint: a layout's hint honours
    // the field's minimum width, a bare line edit's would not.
    auto* corner = new QWidget(window);
    auto* layout = new QHBoxLayout(corner);
    layout->setContentsMargins(0, 1, 4, 1);
    layout->addWidget(field_);
    window->menuBar()->setCornerWidget(corner, Qt::TopRightCorner);
    pause_ = new QTimer(this);
    pause_->setSingleShot(true);
    pause_->setInterval(300);
    connect(field_, &QLineEdit::textEdited, pause_, qOverload<>(&QTimer::start));
    connect(field_, &QLineEdit::returnPressed, this, [this] {
        pause_->stop();
        search(field_->text());
    });
    connect(field_, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (text.isEmpty()) search({});  // the clear button
    });
    connect(pause_, &QTimer::timeout, this, [this] { search(field_->text()); });
    auto* find = new QShortcut(QKeySequence::Find, window);
    connect(find, &QShortcut::activated, this, [this] {
        field_->setFocus(Qt::ShortcutFocusReason);
        field_->selectAll();
    });
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), field_, nullptr, nullptr, Qt::WidgetShortcut);
    connect(escape, &QShortcut::activated, this, [this] { field_->clear(); });
}

void SearchController::setRun(const QString& sessionPath, int run) {
    session_ = sessionPath;
    run_ = run;
    if (highlight_.active()) search(highlight_.query);
}

void SearchController::search(const QString& query) {
    views::SearchHighlight next;
    next.query = query.trimmed();
    static const QRegularExpression hex(QStringLiteral("^0[xX][0-9a-fA-F]{1,16}$"));
    if (next.active() && hex.match(next.query).hasMatch()) {
        next.address = next.query.mid(2).toULongLong(nullptr, 16);
    } else if (next.active() && !session_.isEmpty() && run_ > 0) {
        try {
            storage::SessionReader reader(session_.toStdString(), false);
            for (const std::uint32_t id : storage::StackSearch::matching(reader, run_, next.query.toStdString())) next.stackIds.insert(id);
        } catch (const storage::SessionError& e) {
            emit statusMessage(tr("Search failed: %1").arg(QString::fromStdString(e.problem())));
            return;
        }
    }
    highlight_ = next;
    applyToViews();
}

void SearchController::refresh() { applyToViews(); }

void SearchController::applyToViews() {
    views::AllocationsPlot* plot = views_.allocations->plot();
    plot->setHighlight(highlight_);
    views_.segmentMap->canvas()->setHighlight(highlight_);
    std::vector<views::HeatHighlight> outlines;
    int matchingBands = 0;
    for (int i = 0; i < static_cast<int>(plot->data().bands.size()); ++i) {
        if (!plot->bandMatches(i)) continue;
        ++matchingBands;
        const views::AllocationBandView& b = plot->data().bands[static_cast<std::size_t>(i)];
        if (outlines.size() < kHeatmapOutlines) outlines.push_back({b.allocEvent, b.freeEvent, b.address, b.size});
    }
    views_.heatmap->plot()->setHighlights(std::move(outlines));
    if (!highlight_.active()) {
        emit statusMessage(QString());
        return;
    }
    const int live = views_.segmentMap->canvas()->matchCount();
    if (!highlight_.address && highlight_.stackIds.isEmpty()) {
        emit statusMessage(tr("No frame of this run contains \"%1\"").arg(highlight_.query));
        return;
    }
    emit statusMessage(tr("\"%1\": %2 of the %3 largest allocations the Allocations tab holds, %4 live at this event")
                           .arg(highlight_.query)
                           .arg(views::Formatting::count(matchingBands))
                           .arg(views::Formatting::count(static_cast<qint64>(plot->data().bands.size())))
                           .arg(views::Formatting::count(live)));
}

}  // namespace allocscope::app
