#pragma once
// Editor for a PYTORCH_CUDA_ALLOC_CONF string: a form with one control per option and the raw
// text, kept in sync both ways. The text is validated as the user types through a callback (app
// wires it to parseConfig); problems are underlined in the text at the position the callback
// reports, explained below it, with the suggested correction one click away. The form -> text
// direction goes through a second callback (app wires it to formatConfig).
#include <QWidget>

#include <map>

#include "views/data/FormSpecs.h"

class QLabel;
class QPlainTextEdit;
class QToolButton;

namespace allocscope::views {

class ConfigEditorWidget : public QWidget {
    Q_OBJECT
public:
    explicit ConfigEditorWidget(QWidget* parent = nullptr);

    // Builds the form; defaults to pytorchConfigFieldSpecs().
    void setFieldSpecs(std::vector<ConfigFieldSpec> specs);
    void setValidator(ConfigValidator validator);
    void setFormatter(ConfigFormatter formatter);

    QString text() const;
    // Values of the form. An Int/Double option at its "unset" minimum (a spec with unsetText) is
    // a null QVariant: the option is absent from the string.
    ConfigFormValues values() const;
    const ValidationResult& lastValidation() const { return validation_; }
    bool isAccepted() const { return validation_.accepted; }

    // For tests and keyboard wiring.
    QPlainTextEdit* rawEditor() const { return raw_; }
    QWidget* fieldWidget(const QString& key) const;
    // The underlined ranges in the raw text: (offset, length) per issue shown.
    std::vector<std::pair<int, int>> underlinedRanges() const;
    QString statusText() const;

public slots:
    void setText(const QString& text);  // validates, updates the form, emits textChanged
    void setValues(const ConfigFormValues& values);
    void applySuggestion();  // replaces the text with the validator's correctedText (if any)

signals:
    void textChanged(const QString& text);  // any change, from the text or from the form
    void validityChanged(bool accepted);
    void applyRequested(const QString& text);  // Return pressed in the raw text

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    // A theme switch: the verdict line and the underlines take the new palette's colours.
    void changeEvent(QEvent* event) override;

private:
    void buildForm();
    void onRawTextChanged();
    void onFormChanged();
    void validate();
    void showValidation();
    QVariant fieldValue(const ConfigFieldSpec& spec) const;
    void setFieldValue(const ConfigFieldSpec& spec, const QVariant& value);

    std::vector<ConfigFieldSpec> specs_;
    std::map<QString, QWidget*> fields_;
    ConfigValidator validator_;
    ConfigFormatter formatter_;
    ValidationResult validation_;
    QPlainTextEdit* raw_;
    QLabel* status_;
    QToolButton* suggestion_;
    QWidget* form_ = nullptr;
    bool syncing_ = false;
};

}  // namespace allocscope::views
