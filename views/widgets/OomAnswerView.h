#pragma once
// The OOM tab: the answer for a run that ran out of memory, top to bottom in the order a user
// asks. The headline (would a setting have avoided it?) in large text; the facts (request and
// stream, the limit and how it was inferred, reserved / allocated / cached free / largest free
// block, fragmentation or really full); the request bar (OomRequestBar); a button to the blocks
// and call stacks at the failure (the Stacks tab at the oom event); the what-if table over the
// configs `recommend` tries; the blocks that held the memory with their stacks; PyTorch's
// message verbatim in a monospace box with a Copy button. All of it scrolls, so it reads in a
// small window too; every colour comes from the palette (light and dark themes).
#include <QWidget>

#include "views/data/OomAnswerData.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QTableView;
class QTreeWidget;

namespace allocscope::views {

class OomRequestBar;
class OomWhatIfModel;

class OomAnswerView : public QWidget {
    Q_OBJECT
public:
    explicit OomAnswerView(QWidget* parent = nullptr);

    void setAnswer(const OomAnswerData& answer);
    const OomAnswerData& answer() const { return answer_; }
    // A line instead of the answer: while it is computed, or why there is none.
    void showStatus(const QString& text);

    // The facts as "name: value" lines, in the grid's order (tests, copy).
    QStringList facts() const;
    // The verdict in words: "fragmentation: 7.03 GiB cached free, no block of 256 MiB", ...
    static QString verdictText(const OomAnswerData& answer);
    static QString limitText(const OomLimit& limit);

    QLabel* headlineLabel() const { return headline_; }
    QLabel* headlineNote() const { return headlineNote_; }
    // The headline's answer (large) and what qualifies it (normal text): split at its first "; ",
    // so a long note does not fill the page in large type.
    static QPair<QString, QString> splitHeadline(const QString& headline);
    QLabel* statusLabel() const { return status_; }
    QLabel* whatIfNoteLabel() const { return whatIfNote_; }
    OomRequestBar* bar() const { return bar_; }
    OomWhatIfModel* whatIfModel() const { return whatIfModel_; }
    QTableView* whatIfTable() const { return whatIfTable_; }
    QTreeWidget* holders() const { return holders_; }
    QPlainTextEdit* messageBox() const { return message_; }
    QPushButton* copyButton() const { return copy_; }
    QPushButton* stacksButton() const { return stacks_; }
    QScrollArea* scrollArea() const { return scroll_; }

signals:
    // "Blocks and call stacks at the failure": the window shows the Stacks tab at this event.
    void stacksRequested(qint64 event);

protected:
    void changeEvent(QEvent* event) override;

private:
    void fitTableHeight();
    void applyFonts();

    OomAnswerData answer_;
    QScrollArea* scroll_;
    QWidget* content_;
    QLabel* status_;
    QLabel* headline_;
    QLabel* headlineNote_;
    QLabel* subtitle_;
    QWidget* details_;  // everything under the headline: hidden while a status is shown
    QList<QPair<QLabel*, QLabel*>> factLabels_;
    OomRequestBar* bar_;
    QPushButton* stacks_;
    QLabel* whatIfNote_;
    OomWhatIfModel* whatIfModel_;
    QTableView* whatIfTable_;
    QLabel* holdersNote_;
    QTreeWidget* holders_;
    QPlainTextEdit* message_;
    QPushButton* copy_;
};

}  // namespace allocscope::views
