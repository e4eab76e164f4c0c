#include "views/widgets/ConfigEditorWidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>

#include <QFormLayout>
#include <QGroupBox>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/theme/ThemePalette.h"
#include "views/util/MonospaceFont.h"
#include "views/widgets/RoundupDivisionsEditor.h"

namespace allocscope::views {

ConfigEditorWidget::ConfigEditorWidget(QWidget* parent)
    : QWidget(parent), raw_(new QPlainTextEdit(this)), status_(new QLabel(this)), suggestion_(new QToolButton(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* caption = new QLabel(tr("PYTORCH_CUDA_ALLOC_CONF"), this);
    caption->setBuddy(raw_);
    layout->addWidget(caption);

    // A one-line QPlainTextEdit rather than a QLineEdit: extra selections can underline the exact
    // characters the validator points at.
    raw_->setFont(MonospaceFont::font());
    raw_->setLineWrapMode(QPlainTextEdit::NoWrap);
    raw_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    raw_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    raw_->setTabChangesFocus(true);
    raw_->setPlaceholderText(tr("empty: PyTorch's defaults"));  // short: the line is one row high
    const int lineHeight = QFontMetrics(raw_->font()).lineSpacing();
    raw_->setFixedHeight(lineHeight + 2 * static_cast<int>(raw_->document()->documentMargin()) + 2 * raw_->frameWidth() + 2);
    raw_->installEventFilter(this);
    raw_->setToolTip(tr("The option string as PyTorch reads it from the environment. It is checked as you type."));
    layout->addWidget(raw_);

    auto* statusRow = new QHBoxLayout();
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setToolTip(tr("What PyTorch 2.11 would do with this string"));
    suggestion_->setText(tr("Use suggestion"));
    suggestion_->setToolTip(tr("Replace the text with the suggested correction"));
    suggestion_->setVisible(false);
    statusRow->addWidget(status_, 1);
    statusRow->addWidget(suggestion_, 0, Qt::AlignTop);
    layout->addLayout(statusRow);

    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(scroll, 1);
    form_ = new QWidget(scroll);
    scroll->setWidget(form_);

    connect(raw_, &QPlainTextEdit::textChanged, this, &ConfigEditorWidget::onRawTextChanged);
    connect(suggestion_, &QToolButton::clicked, this, &ConfigEditorWidget::applySuggestion);
    setFieldSpecs(pytorchConfigFieldSpecs());
    validate();
}

void ConfigEditorWidget::setFieldSpecs(std::vector<ConfigFieldSpec> specs) {
    specs_ = std::move(specs);
    buildForm();
}

void ConfigEditorWidget::setValidator(ConfigValidator validator) {
    validator_ = std::move(validator);
    validate();
}

void ConfigEditorWidget::setFormatter(ConfigFormatter formatter) { formatter_ = std::move(formatter); }

void ConfigEditorWidget::buildForm() {
    auto* scroll = qobject_cast<QScrollArea*>(form_->parentWidget() ? form_->parentWidget()->parentWidget() : nullptr);
    fields_.clear();
    auto* form = new QWidget();
    auto* outer = new QVBoxLayout(form);
    outer->setContentsMargins(0, 0, 0, 0);
    std::map<QString, QFormLayout*> groups;
    for (const ConfigFieldSpec& spec : specs_) {
        QFormLayout*& group = groups[spec.group];
        if (!group) {
            auto* box = new QGroupBox(spec.group.isEmpty() ? tr("Options") : spec.group, form);
            group = new QFormLayout(box);
            group->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
            // In a narrow side panel the field goes under its label instead of off the edge.
            group->setRowWrapPolicy(QFormLayout::WrapLongRows);
            outer->addWidget(box);
        }
        QWidget* editor = nullptr;
        switch (spec.kind) {
            case FieldKind::Bool: {
                auto* box = new QCheckBox(form);
                connect(box, &QCheckBox::toggled, this, &ConfigEditorWidget::onFormChanged);
                editor = box;
                break;
            }
            case FieldKind::Int: {
                auto* box = new QSpinBox(form);
                box->setRange(static_cast<int>(spec.minimum), static_cast<int>(spec.maximum));
                box->setSingleStep(std::max(1, static_cast<int>(spec.step)));
                box->setSuffix(spec.suffix);
                box->setSpecialValueText(spec.unsetText);
                box->setAccelerated(true);
                connect(box, &QSpinBox::valueChanged, this, &ConfigEditorWidget::onFormChanged);
                editor = box;
                break;
            }
            case FieldKind::Double: {
                auto* box = new QDoubleSpinBox(form);
                box->setDecimals(spec.decimals);
                box->setRange(spec.minimum, spec.maximum);
                box->setSingleStep(spec.step);
                box->setSuffix(spec.suffix);
                box->setSpecialValueText(spec.unsetText);
                connect(box, &QDoubleSpinBox::valueChanged, this, &ConfigEditorWidget::onFormChanged);
                editor = box;
                break;
            }
            case FieldKind::Choice: {
                auto* box = new QComboBox(form);
                box->addItems(spec.choices);
                connect(box, &QComboBox::currentIndexChanged, this, &ConfigEditorWidget::onFormChanged);
                editor = box;
                break;
            }
            case FieldKind::Divisions: {
                auto* box = new RoundupDivisionsEditor(form);
                connect(box, &RoundupDivisionsEditor::valueChanged, this, &ConfigEditorWidget::onFormChanged);
                editor = box;
                break;
            }
        }
        const QString tip = QStringLiteral("<b>%1</b><br>%2").arg(spec.key, spec.help.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        editor->setToolTip(tip);
        editor->setObjectName(spec.key);
        auto* label = new QLabel(spec.label, form);
        label->setToolTip(tip);
        label->setBuddy(editor);
        group->addRow(label, editor);
        fields_[spec.key] = editor;
        syncing_ = true;
        setFieldValue(spec, spec.defaultValue);
        syncing_ = false;
    }
    outer->addStretch(1);
    if (scroll) {
        scroll->setWidget(form);  // deletes the previous form
    } else {
        delete form_;
    }
    form_ = form;
}

QWidget* ConfigEditorWidget::fieldWidget(const QString& key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() ? nullptr : it->second;
}

QVariant ConfigEditorWidget::fieldValue(const ConfigFieldSpec& spec) const {
    QWidget* w = fieldWidget(spec.key);
    const bool hasUnset = !spec.unsetText.isEmpty();
    switch (spec.kind) {
        case FieldKind::Bool: return static_cast<QCheckBox*>(w)->isChecked();
        case FieldKind::Int: {
            const auto* box = static_cast<QSpinBox*>(w);
            if (hasUnset && box->value() == box->minimum()) return QVariant();
            return static_cast<qlonglong>(box->value());
        }
        case FieldKind::Double: {
            const auto* box = static_cast<QDoubleSpinBox*>(w);
            if (hasUnset && box->value() == box->minimum()) return QVariant();
            return box->value();
        }
        case FieldKind::Choice: return static_cast<QComboBox*>(w)->currentText();
        case FieldKind::Divisions: return static_cast<RoundupDivisionsEditor*>(w)->value();
    }
    return QVariant();
}

void ConfigEditorWidget::setFieldValue(const ConfigFieldSpec& spec, const QVariant& value) {
    QWidget* w = fieldWidget(spec.key);
    const QSignalBlocker block(w);
    switch (spec.kind) {
        case FieldKind::Bool: static_cast<QCheckBox*>(w)->setChecked(value.toBool()); break;
        case FieldKind::Int: {
            auto* box = static_cast<QSpinBox*>(w);
            box->setValue(value.isValid() ? static_cast<int>(value.toLongLong()) : box->minimum());
            break;
        }
        case FieldKind::Double: {
            auto* box = static_cast<QDoubleSpinBox*>(w);
            box->setValue(value.isValid() ? value.toDouble() : box->minimum());
            break;
        }
        case FieldKind::Choice: {
            auto* box = static_cast<QComboBox*>(w);
            const int index = box->findText(value.toString(), Qt::MatchFixedString);
            box->setCurrentIndex(index >= 0 ? index : 0);
            break;
        }
        case FieldKind::Divisions: static_cast<RoundupDivisionsEditor*>(w)->setValue(value.toList()); break;
    }
}

ConfigFormValues ConfigEditorWidget::values() const {
    ConfigFormValues out;
    for (const ConfigFieldSpec& spec : specs_) out.insert(spec.key, fieldValue(spec));
    return out;
}

void ConfigEditorWidget::setValues(const ConfigFormValues& input) {
    syncing_ = true;
    for (const ConfigFieldSpec& spec : specs_)
        setFieldValue(spec, input.contains(spec.key) ? input.value(spec.key) : spec.defaultValue);
    syncing_ = false;
    onFormChanged();
}

QString ConfigEditorWidget::text() const { return raw_->toPlainText(); }

void ConfigEditorWidget::setText(const QString& value) {
    if (value == text()) return;
    raw_->setPlainText(value);  // onRawTextChanged validates and syncs the form
}

void ConfigEditorWidget::applySuggestion() {
    if (!validation_.correctedText.isEmpty()) setText(validation_.correctedText);
}

void ConfigEditorWidget::onRawTextChanged() {
    if (syncing_) return;
    // One line only: a pasted newline would be part of the value PyTorch sees, which is never
    // what was meant.
    const QString current = text();
    if (current.contains(QLatin1Char('\n'))) {
        QString flat = current;
        flat.replace(QLatin1Char('\n'), QString());
        raw_->setPlainText(flat);
        raw_->moveCursor(QTextCursor::End);
        return;
    }
    validate();
    if (validation_.values) {
        syncing_ = true;
        for (const ConfigFieldSpec& spec : specs_)
            setFieldValue(spec, validation_.values->contains(spec.key) ? validation_.values->value(spec.key) : spec.defaultValue);
        syncing_ = false;
    }
    emit textChanged(current);
}

void ConfigEditorWidget::onFormChanged() {
    if (syncing_ || !formatter_) return;
    const QString formatted = formatter_(values());
    if (formatted == text()) return;
    syncing_ = true;
    raw_->setPlainText(formatted);
    raw_->moveCursor(QTextCursor::End);
    syncing_ = false;
    validate();
    emit textChanged(formatted);
}

void ConfigEditorWidget::validate() {
    const bool wasAccepted = validation_.accepted;
    if (validator_) {
        validation_ = validator_(text());
    } else {
        validation_ = ValidationResult{};
        validation_.verdict = tr("not checked (no validator)");
    }
    showValidation();
    if (wasAccepted != validation_.accepted) emit validityChanged(validation_.accepted);
}

void ConfigEditorWidget::changeEvent(QEvent* event) {
    // showValidation() copies colours out of the palette (the verdict line gets a palette of its
    // own): without this, a switch to the dark theme left the verdict in the light theme's black.
    if (event->type() == QEvent::PaletteChange) showValidation();
    QWidget::changeEvent(event);
}

void ConfigEditorWidget::showValidation() {
    const ThemePalette colors = ThemePalette::forPalette(palette());
    const QString current = text();
    QList<QTextEdit::ExtraSelection> selections;
    QStringList tips;
    for (const ValidationIssue& issue : validation_.issues) {
        QString line = issue.message;
        if (!issue.suggestion.isEmpty()) line += tr(" (did you mean “%1”?)").arg(issue.suggestion);
        tips << line;
        if (issue.offset < 0) continue;
        // A zero-length issue (e.g. "ends too early") marks the last character.
        int start = std::min<int>(issue.offset, std::max<int>(0, static_cast<int>(current.size()) - 1));
        int length = std::max(1, issue.length);
        if (start + length > current.size()) length = std::max<int>(0, static_cast<int>(current.size()) - start);
        if (length == 0) continue;
        QTextEdit::ExtraSelection sel;
        sel.cursor = QTextCursor(raw_->document());
        sel.cursor.setPosition(start);
        sel.cursor.setPosition(start + length, QTextCursor::KeepAnchor);
        const QColor color = issue.severity == ValidationIssue::Severity::Error ? colors.selection : colors.inactive;
        sel.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        sel.format.setUnderlineColor(color);
        QColor back = color;
        back.setAlpha(48);
        sel.format.setBackground(back);
        sel.format.setToolTip(line);
        selections.append(sel);
    }
    raw_->setExtraSelections(selections);

    QString status = validation_.verdict;
    if (!validation_.issues.empty()) {
        const ValidationIssue& first = validation_.issues.front();
        status += QStringLiteral("\n") + first.message;
        if (first.offset >= 0) status += tr(" (at column %1)").arg(first.offset + 1);
        if (!first.suggestion.isEmpty()) status += tr(" — did you mean “%1”?").arg(first.suggestion);
        if (validation_.issues.size() > 1) status += tr("\n+%1 more (hover the text)").arg(validation_.issues.size() - 1);
    }
    status_->setText(status);
    QPalette pal = status_->palette();
    pal.setColor(QPalette::WindowText, validation_.accepted ? palette().color(QPalette::WindowText) : colors.selection);
    status_->setPalette(pal);
    raw_->setToolTip(tips.isEmpty() ? tr("The option string as PyTorch reads it from the environment. It is checked as you type.")
                                    : tips.join(QLatin1Char('\n')));
    const bool offerSuggestion = !validation_.correctedText.isEmpty() && validation_.correctedText != current &&
                                 (!validation_.accepted || !validation_.issues.empty());
    suggestion_->setVisible(offerSuggestion);
    suggestion_->setToolTip(tr("Replace the text with: %1").arg(validation_.correctedText));
}

std::vector<std::pair<int, int>> ConfigEditorWidget::underlinedRanges() const {
    std::vector<std::pair<int, int>> out;
    for (const QTextEdit::ExtraSelection& sel : raw_->extraSelections())
        out.emplace_back(sel.cursor.selectionStart(), sel.cursor.selectionEnd() - sel.cursor.selectionStart());
    return out;
}

QString ConfigEditorWidget::statusText() const { return status_->text(); }

bool ConfigEditorWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == raw_ && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            emit applyRequested(text());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace allocscope::views
