#include "app/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

namespace allocscope::app {
namespace {
constexpr int kMaxRecentFiles = 10;
const char* const kRecentKey = "recentFiles";
const char* const kGeometryKey = "mainWindow/geometry";
const char* const kStateKey = "mainWindow/state";
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("AllocScope"));
    setWindowIcon(QIcon(QStringLiteral(":/allocscope/icons/allocscope.svg")));
    placeholder_ = new QLabel(
        tr("<h2>AllocScope</h2><p>A lab for the PyTorch CUDA caching allocator.</p>"
           "<p>Open a session, a PyTorch memory snapshot or an RMM CSV log with "
           "<b>File ▸ Open…</b> (Ctrl+O).</p>"),
        this);
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setWordWrap(true);
    setCentralWidget(placeholder_);
    createMenus();
    statusBar()->showMessage(tr("Ready"));

    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) resize(1280, 720);
    restoreState(settings.value(kStateKey).toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::showOpenDialog);
    open->setShortcut(QKeySequence::Open);
    open->setToolTip(tr("Open a session file, a PyTorch memory snapshot or an RMM CSV log"));
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About AllocScope"), this, &MainWindow::showAbout);
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::addRecentFile(const QString& path) {
    QStringList files = recentFiles();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles) files.removeLast();
    QSettings().setValue(kRecentKey, files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList files = recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        QAction* action = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(files[i]).fileName()));
        action->setToolTip(files[i]);
        const QString path = files[i];
        connect(action, &QAction::triggered, this, [this, path] { openFile(path); });
    }
    recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::showOpenDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open"), QString(),
        tr("All supported (*.allocscope *.pickle *.pkl *.json *.csv);;Sessions (*.allocscope);;"
           "PyTorch snapshots (*.pickle *.pkl *.json);;RMM CSV logs (*.csv);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
}

bool MainWindow::openFile(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists() || !info.isFile() || !info.isReadable()) {
        const QString why = !info.exists() ? tr("the file does not exist")
                            : !info.isFile() ? tr("it is not a regular file")
                                             : tr("it cannot be read (permission denied)");
        QMessageBox::warning(this, tr("Cannot open file"),
                             tr("AllocScope cannot open\n%1\nbecause %2.").arg(path, why));
        statusBar()->showMessage(tr("Could not open %1").arg(path));
        return false;
    }
    currentFile_ = info.absoluteFilePath();
    addRecentFile(currentFile_);
    setWindowTitle(QStringLiteral("%1 — AllocScope").arg(info.fileName()));
    statusBar()->showMessage(tr("Opened %1").arg(currentFile_));
    return true;
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About AllocScope"),
        tr("<h3>AllocScope %1</h3><p>A desktop lab for the PyTorch CUDA caching allocator: "
           "run workloads through a faithful reimplementation, record every event, and see "
           "why GPU memory fragments.</p>")
            .arg(QStringLiteral(ALLOCSCOPE_VERSION)));
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState());
    event->accept();
}

}  // namespace allocscope::app
