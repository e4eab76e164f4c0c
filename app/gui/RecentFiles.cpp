#include "app/gui/RecentFiles.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

#include <utility>

namespace allocscope::app {
namespace {
constexpr int kMaxRecentFiles = 10;
const char* const kRecentKey = "recentFiles";
}  // namespace

RecentFiles::RecentFiles(QMenu* menu, std::function<void(const QString& path)> open) : menu_(menu), open_(std::move(open)) {
    rebuildMenu();
}

QStringList RecentFiles::files() const { return QSettings().value(kRecentKey).toStringList(); }

void RecentFiles::add(const QString& path) {
    QStringList list = files();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxRecentFiles) list.removeLast();
    QSettings().setValue(kRecentKey, list);
    rebuildMenu();
}

void RecentFiles::rebuildMenu() {
    menu_->clear();
    const QStringList list = files();
    for (int i = 0; i < list.size(); ++i) {
        QAction* action = menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(list[i]).fileName()));
        action->setToolTip(list[i]);
        // The lambda keeps its own copy of the path and of `open`: opening rebuilds this menu,
        // which deletes the very action being triggered.
        QObject::connect(action, &QAction::triggered, menu_, [open = open_, path = list[i]] { open(path); });
    }
    menu_->setEnabled(!list.isEmpty());
}

}  // namespace allocscope::app
