#include "views/widgets/ConfigListWidget.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "views/theme/ThemePalette.h"
#include "views/util/MonospaceFont.h"

namespace allocscope::views {
namespace {

constexpr int kConfigRole = Qt::UserRole;  // the accepted config string of a row
constexpr int kVisibleRows = 5;            // the list stays this tall at most: the dock is shared

QString displayText(const QString& config) { return config.isEmpty() ? QStringLiteral("default") : config; }

}  // namespace

ConfigListWidget::ConfigListWidget(QWidget* parent)
    : QWidget(parent), toggle_(new QToolButton(this)), body_(new QWidget(this)), list_(new QListWidget(body_)), line_(new QLineEdit(body_)),
      add_(new QPushButton(tr("A&dd"), body_)), addCurrent_(new QPushButton(tr("Add c&urrent"), body_)),
      remove_(new QPushButton(tr("Remove"), body_)), message_(new QLabel(body_)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    // A collapsible section rather than a group box: collapsed, it costs the dock one line.
    toggle_->setCheckable(true);
    toggle_->setAutoRaise(true);
    toggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toggle_->setFocusPolicy(Qt::StrongFocus);
    toggle_->setToolTip(tr("Show or hide the list of configs the Compare button runs the program under"));
    layout->addWidget(toggle_);

    auto* bodyLayout = new QVBoxLayout(body_);
    bodyLayout->setContentsMargins(0, 0, 0, 0);
    bodyLayout->setSpacing(2);
    list_->setFont(MonospaceFont::font());
    list_->setUniformItemSizes(true);
    list_->setSelectionMode(QAbstractItemView::SingleSelection);
    list_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    list_->setToolTip(tr("The PYTORCH_CUDA_ALLOC_CONF lines Compare runs: the current config and every checked row.\n"
                         "Space checks a row, F2 or a double-click edits it, Delete removes it."));
    list_->installEventFilter(this);
    bodyLayout->addWidget(list_);

    auto* lineRow = new QHBoxLayout;
    line_->setFont(MonospaceFont::font());
    line_->setPlaceholderText(tr("another config, e.g. max_split_size_mb:128"));
    line_->setClearButtonEnabled(true);
    line_->setToolTip(tr("A PYTORCH_CUDA_ALLOC_CONF line to compare too (\"default\" or empty = PyTorch's defaults); "
                         "Return adds it if PyTorch 2.11 accepts it"));
    add_->setToolTip(tr("Add the line on the left to the list, checked (refused with PyTorch's message if PyTorch would reject it)"));
    lineRow->addWidget(line_, 1);
    lineRow->addWidget(add_);
    bodyLayout->addLayout(lineRow);

    auto* buttonRow = new QHBoxLayout;
    addCurrent_->setToolTip(tr("Keep the editor's current config in the list, so it stays compared after you edit it"));
    remove_->setToolTip(tr("Remove the selected row (Delete); the current config cannot be removed"));
    buttonRow->addWidget(addCurrent_);
    buttonRow->addWidget(remove_);
    buttonRow->addStretch(1);
    bodyLayout->addLayout(buttonRow);

    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setToolTip(tr("Why a line was refused, or what Compare needs"));
    message_->setVisible(false);
    bodyLayout->addWidget(message_);
    layout->addWidget(body_);

    // Row 0: the editor's config.
    auto* current = new QListWidgetItem;
    current->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    current->setCheckState(Qt::Checked);
    QFont italic = list_->font();
    italic.setItalic(true);
    current->setFont(italic);
    current->setToolTip(tr("The config in the editor: always compared. Edit it in the editor; \"Add current\" keeps a copy in the list."));
    list_->addItem(current);
    setCurrentConfig(QString(), true);

    connect(toggle_, &QToolButton::toggled, this, &ConfigListWidget::setExpanded);
    connect(list_, &QListWidget::itemChanged, this, &ConfigListWidget::onItemChanged);
    connect(list_, &QListWidget::itemSelectionChanged, this, &ConfigListWidget::updateControls);
    connect(add_, &QPushButton::clicked, this, &ConfigListWidget::addFromLine);
    connect(line_, &QLineEdit::returnPressed, this, &ConfigListWidget::addFromLine);
    connect(line_, &QLineEdit::textEdited, this, [this] {
        if (messageIsError_) showMessage(QString(), false);  // the user is fixing the line
    });
    connect(addCurrent_, &QPushButton::clicked, this, [this] { addCurrent(); });
    connect(remove_, &QPushButton::clicked, this, &ConfigListWidget::removeSelected);
    toggle_->setChecked(true);
    setExpanded(true);
}

void ConfigListWidget::setValidator(ConfigValidator validator) { validator_ = std::move(validator); }

void ConfigListWidget::setNormalizer(ConfigNormalizer normalizer) {
    normalizer_ = std::move(normalizer);
    updateControls();
}

QList<ConfigListEntry> ConfigListWidget::defaultEntries() {
    return {{QString(), true},
            {QStringLiteral("expandable_segments:True"), true},
            {QStringLiteral("garbage_collection_threshold:0.6"), false},
            {QStringLiteral("max_split_size_mb:256"), false},
            {QStringLiteral("roundup_power2_divisions:4"), false}};
}

QList<ConfigListEntry> ConfigListWidget::entries() const {
    QList<ConfigListEntry> out;
    for (int row = 1; row < list_->count(); ++row) {
        const QListWidgetItem* item = list_->item(row);
        out.append({item->data(kConfigRole).toString(), item->checkState() == Qt::Checked});
    }
    return out;
}

int ConfigListWidget::setEntries(const QList<ConfigListEntry>& entries) {
    updating_ = true;
    while (list_->count() > 1) delete list_->takeItem(list_->count() - 1);
    QStringList refused;
    for (const ConfigListEntry& entry : entries) {
        QString why;
        const std::optional<QString> config = accept(entry.config, &why);
        if (!config) {
            refused << why;
            continue;
        }
        if (findRow(normalized(*config)) >= 0) continue;  // a duplicate adds nothing: drop it quietly
        list_->addItem(makeItem({*config, entry.checked}));
    }
    updating_ = false;
    if (refused.isEmpty()) {
        showMessage(QString(), false);
    } else {
        showMessage(tr("Left out of the saved list:\n") + refused.join(QLatin1Char('\n')), true);
    }
    updateControls();
    return static_cast<int>(refused.size());
}

void ConfigListWidget::setCurrentConfig(const QString& text, bool accepted) {
    current_ = text.trimmed();
    currentAccepted_ = accepted;
    QListWidgetItem* item = list_->item(0);
    updating_ = true;
    item->setText(accepted ? tr("current: %1").arg(displayText(current_))
                           : tr("current: %1 (refused by PyTorch: not compared)").arg(current_));
    updating_ = false;
    updateControls();
}

bool ConfigListWidget::addConfig(const QString& text, QString* why) {
    QString reason;
    std::optional<QString> config = accept(text, &reason);
    if (config) {
        const int existing = findRow(normalized(*config));
        if (existing >= 0) {
            reason = tr("“%1” is already in the list (row %2)").arg(list_->item(existing)->text()).arg(existing + 1);
            list_->setCurrentRow(existing);
            config.reset();
        }
    }
    if (!config) {
        showMessage(reason, true);
        if (why) *why = reason;
        return false;
    }
    updating_ = true;
    list_->addItem(makeItem({*config, true}));
    updating_ = false;
    list_->setCurrentRow(list_->count() - 1);
    list_->scrollToItem(list_->item(list_->count() - 1));
    showMessage(QString(), false);
    updateControls();
    emit entriesChanged();
    return true;
}

bool ConfigListWidget::addCurrent(QString* why) {
    if (!currentAccepted_) {
        const QString reason = tr("The editor's config is refused by PyTorch: fix it in the editor first");
        showMessage(reason, true);
        if (why) *why = reason;
        return false;
    }
    return addConfig(current_, why);
}

void ConfigListWidget::removeSelected() {
    const int row = list_->currentRow();
    if (row < 0 || list_->selectedItems().isEmpty()) return;
    if (row == 0) {
        showMessage(tr("The current config is always compared: change it in the editor"), true);
        return;
    }
    delete list_->takeItem(row);
    list_->setCurrentRow(std::min(row, list_->count() - 1));
    showMessage(QString(), false);
    updateControls();
    emit entriesChanged();
}

QList<QPair<QString, QString>> ConfigListWidget::chosenConfigs() const {
    QList<QPair<QString, QString>> out;
    QStringList seen;
    const auto take = [&](const QString& config) {
        const QString key = normalized(config);
        if (seen.contains(key)) return;
        seen << key;
        out.append({displayText(config), config});
    };
    if (currentAccepted_) take(current_);
    for (int row = 1; row < list_->count(); ++row) {
        const QListWidgetItem* item = list_->item(row);
        if (item->checkState() == Qt::Checked) take(item->data(kConfigRole).toString());
    }
    return out;
}

QString ConfigListWidget::message() const { return message_->text(); }

bool ConfigListWidget::isExpanded() const { return toggle_->isChecked(); }

void ConfigListWidget::setExpanded(bool expanded) {
    const bool changed = body_->isHidden() == expanded;
    {
        const QSignalBlocker blocker(toggle_);
        toggle_->setChecked(expanded);
    }
    toggle_->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
    body_->setVisible(expanded);
    updateControls();
    if (changed) emit expandedChanged(expanded);
}

bool ConfigListWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == list_ && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Delete && key->modifiers() == Qt::NoModifier) {
            removeSelected();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

std::optional<QString> ConfigListWidget::accept(const QString& text, QString* why) const {
    QString config = text.trimmed();
    if (config.compare(QLatin1String("default"), Qt::CaseInsensitive) == 0) config.clear();
    if (!validator_) return config;
    const ValidationResult result = validator_(config);
    if (result.accepted) return config;
    // The same words the config editor shows: PyTorch's verdict, then the first problem and where.
    QString reason = tr("PyTorch 2.11 refuses “%1”: %2").arg(config, result.verdict);
    if (!result.issues.empty()) {
        const ValidationIssue& first = result.issues.front();
        reason += QStringLiteral("\n") + first.message;
        if (first.offset >= 0) reason += tr(" (at column %1)").arg(first.offset + 1);
        if (!first.suggestion.isEmpty()) reason += tr(" — did you mean “%1”?").arg(first.suggestion);
    }
    if (why) *why = reason;
    return std::nullopt;
}

QString ConfigListWidget::normalized(const QString& config) const { return normalizer_ ? normalizer_(config) : config.trimmed(); }

int ConfigListWidget::findRow(const QString& key, int except) const {
    for (int row = 1; row < list_->count(); ++row) {
        if (row != except && normalized(list_->item(row)->data(kConfigRole).toString()) == key) return row;
    }
    return -1;
}

QListWidgetItem* ConfigListWidget::makeItem(const ConfigListEntry& entry) const {
    auto* item = new QListWidgetItem(displayText(entry.config));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | Qt::ItemIsEditable);
    item->setData(kConfigRole, entry.config);
    item->setCheckState(entry.checked ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(tr("%1\nChecked: compared. F2 or double-click to edit, Delete to remove.")
                         .arg(entry.config.isEmpty() ? tr("PyTorch's defaults (no PYTORCH_CUDA_ALLOC_CONF)") : entry.config));
    return item;
}

void ConfigListWidget::onItemChanged(QListWidgetItem* item) {
    if (updating_) return;
    const int row = list_->row(item);
    if (row <= 0) return;
    const QString stored = item->data(kConfigRole).toString();
    if (item->text() != displayText(stored)) {
        // An inline edit: the new line must pass the parser and not repeat another row.
        QString why;
        std::optional<QString> config = accept(item->text(), &why);
        if (config) {
            const int existing = findRow(normalized(*config), row);
            if (existing >= 0) {
                why = tr("“%1” is already in the list (row %2)").arg(list_->item(existing)->text()).arg(existing + 1);
                config.reset();
            }
        }
        updating_ = true;
        if (config) {
            const ConfigListEntry edited{*config, item->checkState() == Qt::Checked};
            QListWidgetItem* fresh = makeItem(edited);
            item->setData(kConfigRole, edited.config);
            item->setText(fresh->text());
            item->setToolTip(fresh->toolTip());
            delete fresh;
        } else {
            item->setText(displayText(stored));
        }
        updating_ = false;
        if (!config) {
            showMessage(tr("Row %1 not changed: %2").arg(row + 1).arg(why), true);
            return;
        }
    }
    showMessage(QString(), false);
    updateControls();
    emit entriesChanged();
}

void ConfigListWidget::addFromLine() {
    if (addConfig(line_->text())) line_->clear();
}

void ConfigListWidget::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) applyMessageColor();
    QWidget::changeEvent(event);
}

// The message line has a palette of its own (errors in the theme's alarm colour), so a theme
// switch must set it again.
void ConfigListWidget::applyMessageColor() {
    const ThemePalette colors = ThemePalette::forPalette(palette());
    QPalette pal = message_->palette();
    pal.setColor(QPalette::WindowText, messageIsError_ ? colors.selection : palette().color(QPalette::WindowText));
    message_->setPalette(pal);
}

void ConfigListWidget::showMessage(const QString& text, bool error) {
    messageIsError_ = error && !text.isEmpty();
    message_->setText(text);
    applyMessageColor();
    message_->setVisible(!text.isEmpty());
    if (!messageIsError_) updateControls();
}

void ConfigListWidget::updateControls() {
    const int chosen = static_cast<int>(chosenConfigs().size());
    toggle_->setText(chosen == 1 ? tr("Compare w&ith: 1 config") : tr("Compare w&ith: %1 configs").arg(chosen));
    const int row = list_->selectedItems().isEmpty() ? -1 : list_->currentRow();
    remove_->setEnabled(row > 0);
    addCurrent_->setEnabled(currentAccepted_);
    if (!messageIsError_) {
        const QString hint = chosen < 2 ? tr("Compare needs two different configs: check a row or add a line.") : QString();
        message_->setText(hint);
        message_->setVisible(!hint.isEmpty());
    }
    // At most kVisibleRows tall (it scrolls beyond), never shorter than three rows.
    const int hinted = list_->sizeHintForRow(0);
    const int rowHeight = hinted > 0 ? hinted : list_->fontMetrics().height() + 4;
    const int rows = std::clamp(static_cast<int>(list_->count()), 3, kVisibleRows);
    list_->setFixedHeight(rows * rowHeight + 2 * list_->frameWidth());
}

}  // namespace allocscope::views
