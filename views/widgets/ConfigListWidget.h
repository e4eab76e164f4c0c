#pragma once
// "Compare with": which PYTORCH_CUDA_ALLOC_CONF lines the Compare button runs one program under.
// A small checkable list. Its first row is the config being edited ("current: …"): it is always
// compared (it is what the user is working on), so it can be neither unchecked nor removed. The
// other rows are the user's: added from a line edit or from the editor's config, edited in place
// (F2 / double-click), removed with Remove or the Delete key. Every line passes the validator
// (app wires it to parseConfig) before it is listed; a refused line stays out and the parser's
// message is shown. Duplicates are found through a normaliser callback (app: the canonical
// formatConfig string), so "a,b" and "b,a" are listed and compared once.
#include <QList>
#include <QPair>
#include <QString>
#include <QWidget>

#include <functional>
#include <optional>

#include "views/data/FormSpecs.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QToolButton;

namespace allocscope::views {

struct ConfigListEntry {
    QString config;  // "" = PyTorch's defaults (shown as "default")
    bool checked = false;
    bool operator==(const ConfigListEntry&) const = default;
};

// The canonical text of an accepted config: two lines with the same canonical text are one config.
using ConfigNormalizer = std::function<QString(const QString& text)>;

class ConfigListWidget : public QWidget {
    Q_OBJECT
public:
    explicit ConfigListWidget(QWidget* parent = nullptr);

    void setValidator(ConfigValidator validator);
    void setNormalizer(ConfigNormalizer normalizer);

    // The first-time list: the defaults and expandable segments checked, three common settings not.
    static QList<ConfigListEntry> defaultEntries();

    // The user's rows in list order (not the "current" row).
    QList<ConfigListEntry> entries() const;
    // Replaces the user's rows (e.g. from saved settings). Lines the validator refuses and
    // duplicates are left out and said in message(); returns how many were left out.
    int setEntries(const QList<ConfigListEntry>& entries);

    // The editor's config, shown as the first row; `accepted` false keeps it out of the comparison.
    void setCurrentConfig(const QString& text, bool accepted);

    // Adds a line (checked). "default" or an empty line means PyTorch's defaults. False, with the
    // reason in *why and in message(), when the parser refuses it or it is already listed.
    bool addConfig(const QString& text, QString* why = nullptr);
    bool addCurrent(QString* why = nullptr);  // adds the "current" row's config
    void removeSelected();                    // the current row is never removed

    // What Compare runs, as (label, config): the current config first, then the checked rows in
    // list order; a config that normalises like an earlier one is left out. Labels are the
    // config text, or "default".
    QList<QPair<QString, QString>> chosenConfigs() const;

    QString message() const;
    bool isExpanded() const;

    // For tests and keyboard wiring.
    QListWidget* list() const { return list_; }
    QLineEdit* lineEdit() const { return line_; }
    QPushButton* addButton() const { return add_; }
    QPushButton* addCurrentButton() const { return addCurrent_; }
    QPushButton* removeButton() const { return remove_; }
    QToolButton* toggleButton() const { return toggle_; }

public slots:
    void setExpanded(bool expanded);

signals:
    void entriesChanged();  // a row added, removed, edited, checked or unchecked
    void expandedChanged(bool expanded);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    // A theme switch: the message line takes the new palette's colours.
    void changeEvent(QEvent* event) override;

private:
    void applyMessageColor();
    // The accepted form of `text` ("default" -> ""), or nullopt with *why.
    std::optional<QString> accept(const QString& text, QString* why) const;
    QString normalized(const QString& config) const;
    // Row of a user entry whose config normalises to `key`, skipping `except`; -1 if none.
    int findRow(const QString& key, int except = -1) const;
    QListWidgetItem* makeItem(const ConfigListEntry& entry) const;
    void onItemChanged(QListWidgetItem* item);
    void addFromLine();
    void showMessage(const QString& text, bool error);
    void updateControls();

    ConfigValidator validator_;
    ConfigNormalizer normalizer_;
    QString current_;
    bool currentAccepted_ = true;
    QToolButton* toggle_;
    QWidget* body_;
    QListWidget* list_;
    QLineEdit* line_;
    QPushButton* add_;
    QPushButton* addCurrent_;
    QPushButton* remove_;
    QLabel* message_;
    bool messageIsError_ = false;
    bool updating_ = false;  // set while the widget itself changes items
};

}  // namespace allocscope::views
