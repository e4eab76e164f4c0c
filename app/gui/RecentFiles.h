#pragma once
// File ▸ Open Recent: the last sessions opened or saved, newest first, remembered across runs of
// the app in QSettings ("recentFiles", absolute paths, at most 10). Kept apart from MainWindow so
// the list's rules live in one place; the window only says what was opened and how to open.
#include <QString>
#include <QStringList>

#include <functional>

class QMenu;

namespace allocscope::app {

class RecentFiles {
public:
    // Fills `menu` (owned by the window, outliving this object) and keeps it up to date; choosing
    // an entry calls `open` with its path.
    RecentFiles(QMenu* menu, std::function<void(const QString& path)> open);

    QStringList files() const;
    // Moves `path` (made absolute) to the front, dropping the oldest beyond the maximum.
    void add(const QString& path);

private:
    void rebuildMenu();

    QMenu* menu_;
    std::function<void(const QString&)> open_;
};

}  // namespace allocscope::app
