#include "app/ComparePage.h"

#include "views/widgets/CompareWidget.h"

// Placeholder until the page lands (keeps the moc'd signals linkable).
namespace allocscope::app {
ComparePage::ComparePage(QWidget* parent) : QWidget(parent), widget_(new views::CompareWidget(this)) {}
ComparePage::~ComparePage() = default;
void ComparePage::setSession(const QString& sessionPath, storage::SessionWriter* writer) {
    sessionPath_ = sessionPath;
    writer_ = writer;
}
void ComparePage::startCompare(const CompareRequest&) {}
void ComparePage::showRuns(const QList<int>&) {}
void ComparePage::setCurrentOp(qint64 op) { currentOp_ = op; }
views::CompareWidget* ComparePage::compareWidget() const { return widget_; }
bool ComparePage::isBusy() const { return busy_; }
void ComparePage::cancel() {}
QList<int> ComparePage::shownRuns() const { return {}; }
bool ComparePage::exportTableCsv(const QString&, QString*) const { return false; }
bool ComparePage::exportChartsPng(const QString&, QString*) const { return false; }
bool ComparePage::exportChartsSvg(const QString&, QString*) const { return false; }
void ComparePage::say(const QString& text) { lastMessage_ = text; }
void ComparePage::setBusy(bool busy) { busy_ = busy; }
void ComparePage::refreshMaps() {}
}  // namespace allocscope::app
