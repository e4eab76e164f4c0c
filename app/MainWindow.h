#pragma once
// The application's main window: menus, recent files, remembered geometry. Views are added to it
// by the session controller; this class only owns the frame around them.
#include <QMainWindow>
#include <QStringList>

class QMenu;
class QLabel;

namespace allocscope::app {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a file given on the command line, through File ▸ Open or Open Recent. Returns false
    // (after telling the user why) when the file cannot be opened.
    bool openFile(const QString& path);
    QStringList recentFiles() const;
    QString currentFile() const { return currentFile_; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createMenus();
    void rebuildRecentMenu();
    void addRecentFile(const QString& path);
    void showOpenDialog();
    void showAbout();

    QMenu* recentMenu_ = nullptr;
    QLabel* placeholder_ = nullptr;
    QString currentFile_;
};

}  // namespace allocscope::app
